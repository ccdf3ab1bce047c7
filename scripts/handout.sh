#!/usr/bin/env bash
#   scripts/handout.sh [OUT.tar.gz]     (default dist/pplab-handout.tar.gz)
# Builds the student tarball: the kit (lib/, sandbox/, kernels/, grader/, docs/, bench/,
# scripts/, Makefile, README.md) and labs/ freshly generated from solutions/ (stubs and the lab READMEs) —
# without solutions/, without the grader's own tests (they hold broken solutions and the solutions'
# expectations), without the instructor's material (docs/instructor.md with its sample hidden configurations,
# the CI workflows of docs/ci/), and without any solution marker. The working tree, labs/ included, is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
dest="$stage/pplab"
mkdir -p "$dest"
# what git tracks or would track, as it is in the working tree (a file deleted there is not shipped)
git ls-files -z --cached --others --exclude-standard -- Makefile README.md lib sandbox kernels grader docs bench scripts \
    'labs/*.md' 'labs/*/*.md' ':!docs/instructor.md' ':!docs/ci' |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    xargs -0 -I{} cp --parents {} "$dest"/
bash scripts/mklabs.sh --out "$dest/labs"
marker='//>''> solution'   # split so this script does not match itself
if grep -rIl -e "$marker" "$dest/labs" >/dev/null; then
    echo "handout.sh: solution markers left in: $(grep -rIl -e "$marker" "$dest/labs" | head -3)" >&2
    exit 1
fi
out=${1:-dist/pplab-handout.tar.gz}
mkdir -p "$(dirname "$out")"
tar -C "$stage" -czf "$out" pplab
echo "$out: $(tar -tzf "$out" | wc -l) files, no solutions/"
