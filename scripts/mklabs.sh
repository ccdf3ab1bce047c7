#!/usr/bin/env bash
# Generates the student handout sources labs/NN-name/*.c from solutions/ by deleting every block between a
# "//>> solution" line and its "//<< solution" line. solutions/ is the single source; never edit labs/*.c by hand.
#   scripts/mklabs.sh            regenerate labs/
#   scripts/mklabs.sh --check    exit 1 (and name the file) if labs/ is out of date
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for src in solutions/*/*.c; do
    dst="labs/${src#solutions/}"
    mkdir -p "$(dirname "$dst")"
    out=$(sed '/^[[:space:]]*\/\/>> solution/,/^[[:space:]]*\/\/<< solution/d' "$src")
    if [ "${1:-}" = "--check" ]; then
        if ! diff -q <(printf '%s\n' "$out") "$dst" >/dev/null 2>&1; then
            echo "labs/ is out of date: $dst differs from $src without its solution blocks (run scripts/mklabs.sh)" >&2
            status=1
        fi
    else
        printf '%s\n' "$out" > "$dst"
    fi
done
exit $status
