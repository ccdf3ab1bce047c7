#!/usr/bin/env bash
# Generates the student stubs from solutions/ by deleting every block that a solution-begin marker line opens
# and a solution-end marker line closes (see any file under solutions/). solutions/ is the single source;
# never edit a stub by hand in the kit.
#   scripts/mklabs.sh              regenerate labs/ (maintainers, after changing solutions/)
#   scripts/mklabs.sh --out DIR    write the stubs into DIR/NN-name/ instead (the pristine handout: the
#                                  grader's self-check and the handout use it, so a student's labs/ is never touched)
#   scripts/mklabs.sh --check      exit 1 if the committed labs/ differ from solutions/ without solution blocks
#                                  (a student's uncommitted edits to labs/ are fine)
set -euo pipefail
mode=write out=labs
case "${1:-}" in
    --out) mkdir -p "${2:?--out needs a folder}"; out=$(cd "$2" && pwd) ;; # relative to where it was run
    --check) mode=check ;;
    "") ;;
    *) echo "usage: scripts/mklabs.sh [--out DIR | --check]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
[ "$out" = labs ] && out=$PWD/labs
if ! compgen -G "solutions/*/*.c" >/dev/null; then
    echo "mklabs.sh: no solutions/ here (a student handout?): nothing to generate" >&2
    [ "$mode" = check ] && exit 0
    exit 1
fi
strip() { sed '/^[[:space:]]*\/\/>> solution/,/^[[:space:]]*\/\/<< solution/d' "$1"; }
status=0
for src in solutions/*/*.c; do
    rel=${src#solutions/}
    if [ "$mode" = check ]; then
        # the committed stub when this is a git work tree, else the file itself
        if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && git cat-file -e "HEAD:labs/$rel" 2>/dev/null; then
            have=$(git show "HEAD:labs/$rel")
        else
            have=$(cat "labs/$rel" 2>/dev/null || true)
        fi
        if [ "$(strip "$src")" != "$have" ]; then
            echo "labs/$rel is out of date with $src: run scripts/mklabs.sh and commit" >&2
            status=1
        fi
    else
        mkdir -p "$out/$(dirname "$rel")"
        strip "$src" > "$out/$rel"
    fi
done
exit $status
