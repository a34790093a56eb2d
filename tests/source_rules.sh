#!/usr/bin/env bash
# Rules the library's sources keep: host memory only through the counted
# allocator (src/core/memory.c), no exit or abort, no MPI_COMM_WORLD, no CUDA
# header in the planning code, no printing (progress goes to a caller's function:
# halo_io_set_progress).
set -u
src=$1/src
fail=0
hits=$(grep -rnE '\b(malloc|calloc|realloc|free|strdup)\s*\(' "$src" --include='*.c' --include='*.h' \
        | grep -v 'src/core/memory.c' | grep -vE 'halo_(malloc|calloc|realloc|free)')
[ -n "$hits" ] && { echo "raw allocation outside src/core/memory.c:"; echo "$hits"; fail=1; }
hits=$(grep -rnE '\b(exit|abort)\s*\(' "$src")
[ -n "$hits" ] && { echo "exit/abort in the library:"; echo "$hits"; fail=1; }
hits=$(grep -rn 'MPI_COMM_WORLD' "$src")
[ -n "$hits" ] && { echo "MPI_COMM_WORLD in the library:"; echo "$hits"; fail=1; }
hits=$(grep -rnE '\b(printf|vprintf|puts|putchar|perror)\s*\(|\bstd(out|err)\b' "$src")
[ -n "$hits" ] && { echo "printing in the library:"; echo "$hits"; fail=1; }
hits=$(grep -rnE '#include\s*[<"](cuda|cusparse|nccl)' "$src/plan")
[ -n "$hits" ] && { echo "CUDA header in src/plan:"; echo "$hits"; fail=1; }
exit $fail
