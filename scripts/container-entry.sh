#!/usr/bin/env bash
# The container's entry point (Dockerfile): runs the command given, once the mounted work tree is known to be
# writable by the user the container runs as. On a Linux host the folder keeps its owner's uid, and a uid other
# than the container's user would meet make's "Permission denied" on every file of build/; this says so once, with
# the fix, instead.
set -euo pipefail
dir=${PPLAB_DIR:-/work/pplab}
if [ -f "$dir/Makefile" ] && ! [ -w "$dir" ]; then
    owner=$(stat -c %u "$dir")
    echo "pplab: $dir belongs to uid $owner, and this container runs as uid $(id -u), which cannot write there:" \
         "add --user $owner:$(stat -c %g "$dir") to docker run (or run as root with --user root)" >&2
    exit 2
fi
exec "$@"
