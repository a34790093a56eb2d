#!/usr/bin/env bash
# Rules the library's sources keep: host memory only through the counted
# allocator (src/core/memory.c), no exit or abort, no MPI_COMM_WORLD, no CUDA
# header in the planning code, no printing (progress goes to a caller's function:
# halo_io_set_progress), the environment read in src/core/env.c alone, and
# the floors of the data flow: core below everything; plan (and io) on core;
# exec and spmv on plan; model (the model, parameters, the simulator) on plan,
# exec and io; interface, the plan handle, above them all; the
# adapters (src/interop) on the public headers alone. The adapters live in
# another library's process (PETSc's, hypre's): they allocate their own small
# records, and the hypre adapter, which has no options database to use, reads
# its environment variables in one place (its settings.c) and prints only
# its warnings (hh_warn, settings.c), its report (view.c) and the load-order check
# (shim.c).
set -u
src=$1/src
fail=0
hits=$(grep -rnE '\b(malloc|calloc|realloc|free|strdup)\s*\(' "$src" --include='*.c' --include='*.h' \
        | grep -v 'src/core/memory.c' | grep -v 'src/interop/' | grep -vE 'halo_(malloc|calloc|realloc|free)')
[ -n "$hits" ] && { echo "raw allocation outside src/core/memory.c:"; echo "$hits"; fail=1; }
hits=$(grep -rnE '\b(exit|abort)\s*\(' "$src")
[ -n "$hits" ] && { echo "exit/abort in the library:"; echo "$hits"; fail=1; }
hits=$(grep -rn 'MPI_COMM_WORLD' "$src" | grep -vE 'src/interop/hypre/(settings|view)\.c')
[ -n "$hits" ] && { echo "MPI_COMM_WORLD in the library:"; echo "$hits"; fail=1; }
hits=$(grep -rnE '\b(printf|vprintf|puts|putchar|perror)\s*\(|\bstd(out|err)\b' "$src" |
       grep -vE 'src/interop/hypre/(settings|view|shim)\.c')
[ -n "$hits" ] && { echo "printing in the library:"; echo "$hits"; fail=1; }
hits=$(grep -rnE '#include\s*[<"](cuda|cusparse|nccl)' "$src/plan" "$src/model")
[ -n "$hits" ] && { echo "CUDA header in src/plan or src/model:"; echo "$hits"; fail=1; }
hits=$(grep -rnE '\bgetenv\s*\(' "$src" | grep -v 'src/core/env.c' |
       grep -v 'src/interop/hypre/settings\.c')
[ -n "$hits" ] && { echo "the environment read outside src/core/env.c:"; echo "$hits"; fail=1; }
# floor by floor, what a folder must not include
check_floor() { # folder, pattern of forbidden includes
  local hits
  hits=$(grep -rnE "#include\s*\"($2)" "$src/$1")
  [ -n "$hits" ] && { echo "src/$1 includes from a floor above it:"; echo "$hits"; fail=1; }
}
check_floor core 'plan/|exec/|spmv/|interface/|io/|model/'
check_floor io 'plan/|exec/|spmv/|interface/|model/'
check_floor plan 'exec/|spmv/|interface/|io/|model/'
check_floor model 'spmv/|interface/'
check_floor exec 'spmv/|interface/|model/'
check_floor spmv 'exec/|interface/|model/'
# the adapters stand on the public API alone
check_floor interop 'core/|plan/|model/|exec/|spmv/|interface/|io/|halo_impl|settings|tags'
exit $fail
