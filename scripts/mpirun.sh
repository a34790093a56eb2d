#!/usr/bin/env bash
# mpirun with the flags this machine needs: Open MPI runs more ranks than
# cores only with --oversubscribe, and as root only when allowed.
flags=()
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  flags+=(--oversubscribe)
  [ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
fi
exec mpirun "${flags[@]}" "$@"
