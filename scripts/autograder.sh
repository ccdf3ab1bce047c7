#!/usr/bin/env bash
#   scripts/autograder.sh HIDDEN [OUT.zip]     (make autograder HIDDEN=FILE; default dist/pplab-autograder.zip)
# Writes Gradescope's autograder zip: the instructor's grading tree (scripts/handout.sh --grading: the handout with
# the kit's answer files, which compute the answers of any configuration, and without solutions/ or the
# instructor's pages), the hidden configuration HIDDEN as hidden.cfg, and the two scripts Gradescope runs,
# setup.sh (once, when the image is built) and run_autograder (once per submission). The zip is the instructor's:
# Gradescope never shows it to students, and it must never be handed out (it grades any configuration, so it
# answers any). run_autograder copies every lab file the schedule
# table names (pplab info --lab-files, read here): a lab added to the table reaches the zip with no edit.
# Both scripts take the autograder's folder from $AUTOGRADER (default /autograder, Gradescope's), so that the
# kit's test can run them in a scratch tree of the same shape.
set -euo pipefail
cd "$(dirname "$0")/.."
hidden=${1:-}
out=${2:-dist/pplab-autograder.zip}
fail() { echo "autograder.sh: $*" >&2; exit 2; }
[ -n "$hidden" ] || fail "name the hidden configuration: make autograder HIDDEN=FILE (docs/instructor.md, section 2)"
[ -f "$hidden" ] && [ -r "$hidden" ] || fail "HIDDEN=$hidden: no such file"
# the warm-up's graded cases are drawn with the file's seed: without one they are the public, answerable ones
sed 's/#.*//' "$hidden" | grep -Eq '^[[:space:]]*warmup-seed=[0-9]+[[:space:]]*$' ||
    fail "HIDDEN=$hidden has no warmup-seed=N line: add one (a number of your own, kept secret), or the warm-up is graded on its public cases"
command -v zip >/dev/null || fail "zip not found: apt-get install zip"
[ -x build/pplab ] || fail "build/pplab is missing: run make first"
files=$(build/pplab info --lab-files)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
bash scripts/handout.sh --grading "$stage" >/dev/null
src="$stage/pplab"
cp "$hidden" "$src/hidden.cfg"

cat > "$src/setup.sh" <<'SETUP'
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (written by scripts/autograder.sh).
set -euo pipefail
cd "${AUTOGRADER:-/autograder}/source"
bash scripts/deps.sh                 # the kit's one package list, as root
make NO_CUDA=1
# the folder alone is made private: it hides all it holds, while the driver inside keeps the mode make gave it,
# which each test's uid needs to start it (pplab grade refuses a driver those uids cannot run)
chmod 0700 .
SETUP

{
    cat <<'HEAD'
#!/usr/bin/env bash
# Gradescope runs this once per submission, as root (written by scripts/autograder.sh from the schedule table).
# Each lab file is taken from the submission, wherever it is in it, as a plain file only; a file the
# submission lacks is removed from labs/, so that its lab's tests say which file is missing. Nothing else of the
# submission is read: it cannot replace the grader or the library.
set -uo pipefail
ag=${AUTOGRADER:-/autograder}
cd "$ag/source"
HEAD
    printf 'files="%s"\n' "$(echo "$files" | tr '\n' ' ' | sed 's/ $//')"
    cat <<'BODY'
for f in $files; do
    src=$(find "$ag/submission" -type f -name "$(basename "$f")" -print -quit)
    if [ -n "$src" ]; then cp -- "$src" "labs/$f"; else rm -f -- "labs/$f"; fi
done
mkdir -p "$ag/results"
export NO_COLOR=1
build/pplab grade --impl labs --lab all --config hidden.cfg --quiet --gradescope "$ag/results/results.json"
rc=$?
# a score below full marks is a result (1); a setup that cannot grade (2) or a test pplab could not grade (3) is
# the autograder's failure, which Gradescope shows as one
[ "$rc" -le 1 ] && exit 0
exit "$rc"
BODY
} > "$src/run_autograder"
chmod 0755 "$src/setup.sh" "$src/run_autograder"
mkdir -p "$(dirname "$out")"
rm -f "$out"
abs=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
(cd "$src" && zip -qr "$abs" .)
echo "$out: $(unzip -l "$out" | tail -1 | awk '{print $2}') files: the grading tree (the handout and the kit's answer files), hidden.cfg, setup.sh, run_autograder"
