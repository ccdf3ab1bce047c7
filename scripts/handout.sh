#!/usr/bin/env bash
#   scripts/handout.sh [OUT.tar.gz]     (default dist/pplab-handout.tar.gz)
#   scripts/handout.sh --stage DIR      the same tree, unpacked into DIR/pplab, no tarball (scripts/doccheck.sh
#                                       checks its paths)
#   scripts/handout.sh --grading DIR    the instructor's grading tree into DIR/pplab: the handout with the kit's
#                                       answer files put back, so that it grades hidden configurations (make
#                                       autograder zips it); never a student's
# Builds the student tarball: the kit (base/, lib/, kernels/, sandbox/, driver/, grader/, docs/, bench/, scripts/,
# data/, Makefile, README.md; the container's Dockerfile, .dockerignore and .devcontainer/, which a grading tree
# leaves out) and labs/ freshly generated from solutions/ (stubs and the lab READMEs) — without solutions/,
# without the grader's own tests (they hold broken solutions and the solutions' expectations), without the kit's
# answer files (`make answer-files` lists them: the code that computes what the labs grade, the generators of the
# canonical orders, the placements, the library's own tensor-parallel block, the order interpreter, the warm-up's
# keys; the handout grades with lib/schedule/answers.rec instead), without the instructor's material
# (docs/instructor.md with its sample hidden configurations, the CI workflows of docs/ci/, and every block of a
# Markdown file between a "<!-- kit-only" line and a "<!-- /kit-only -->" line: the derivations a lab asks for,
# and what cites the kit's own tests), and without any solution marker. The working tree, labs/ included, is left
# as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
out=dist/pplab-handout.tar.gz
keep="" grading=0
case "${1:-}" in
    --stage) keep=${2:?--stage needs a folder} ;;
    --grading) keep=${2:?--grading needs a folder} grading=1 ;;
    "") ;;
    *) out=$1 ;;
esac
dest="$stage/pplab"
mkdir -p "$dest"
answers=$(make -s --no-print-directory answer-files)
[ -n "$answers" ] || { echo "handout.sh: make answer-files listed nothing: is this the kit?" >&2; exit 1; }
leave=()
for f in $answers; do leave+=(":!$f"); done
# what git tracks or would track, as it is in the working tree (a file deleted there is not shipped)
# the container is the student's (a desk that is not Debian); Gradescope's zip, a grading tree, goes without it
container=(Dockerfile .dockerignore .devcontainer)
[ $grading = 1 ] && container=()
git ls-files -z --cached --others --exclude-standard -- Makefile README.md "${container[@]}" base lib kernels sandbox \
    driver grader docs bench scripts data 'labs/*.md' 'labs/*/*.md' ':!docs/instructor.md' ':!docs/ci' "${leave[@]}" |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 -I{} cp --parents {} "$dest"/
# the grading tree computes every answer, hidden configurations' too
if [ $grading = 1 ]; then
    for f in $answers; do cp --parents "$f" "$dest"/; done
fi
# the kit's own blocks leave every Markdown file (a blank line left on either side of one becomes one)
find "$dest" -name '*.md' -print0 | while IFS= read -r -d '' f; do
    awk -v f="${f#"$dest"/}" '
        /^<!-- kit-only/ { if (skip) { print f ":" NR ": a kit-only block opens inside another" > "/dev/stderr"; exit 1 }
                           skip = 1; next }
        /^<!-- \/kit-only -->/ { if (!skip) { print f ":" NR ": a kit-only block closes that never opened" > "/dev/stderr"; exit 1 }
                                 skip = 0; next }
        !skip
        END { if (skip) { print f ": a kit-only block never closes" > "/dev/stderr"; exit 1 } }' "$f" | cat -s > "$f.new"
    mv "$f.new" "$f"
done
bash scripts/mklabs.sh --out "$dest/labs"
marker='//>''> solution'   # split so this script does not match itself
if grep -rIl -e "$marker" "$dest/labs" >/dev/null; then
    echo "handout.sh: solution markers left in: $(grep -rIl -e "$marker" "$dest/labs" | head -3)" >&2
    exit 1
fi
# a record behind the generators would grade a handout against yesterday's answers
if [ $grading = 0 ] && [ -x build/tests/record_answers ] &&
    ! bash scripts/doccheck.sh --list | build/tests/record_answers | cmp -s - lib/schedule/answers.rec; then
    echo "handout.sh: lib/schedule/answers.rec differs from what the generators answer now: run make answers" >&2
    exit 1
fi
if [ -n "$keep" ]; then
    mkdir -p "$keep"
    cp -r "$dest" "$keep"/
    exit 0
fi
mkdir -p "$(dirname "$out")"
tar -C "$stage" -czf "$out" pplab
echo "$out: $(tar -tzf "$out" | wc -l) files, no solutions/"
