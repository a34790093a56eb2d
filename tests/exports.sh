#!/usr/bin/env bash
# The shared library exports the public API and nothing else: every symbol it
# defines for the dynamic linker is a function declared in include/ (the
# loader's _init and _fini aside) or one the internal headers of src/ mark
# HALO_MODULE_API (what halo's CUDA module calls back), and every function
# declared there (static inline ones aside) is exported. With a fourth
# argument, the CUDA module libhalo_cuda.so exports its table alone, and
# libhalo exports every halo_ function the module calls.
set -u
lib=$1
inc=$2
src=${3:-}
module=${4:-}
[ -f "$lib" ] || { echo "no library at $lib"; exit 1; }
exported=$(nm -D --defined-only "$lib" | awk 'NF == 3 {print $3}' | grep -vxE '_init|_fini' | sort -u)
# the adapters' headers (petsc.h, hypre.h) belong to their own libraries
headers=$(ls "$inc"/halo.h "$inc"/halo/*.h | grep -vE '/(petsc|hypre)\.h$')
declared=$(cat $headers | tr '\n' ' ' | grep -oE '\bhalo_[a-z0-9_]+[[:space:]]*\(' |
           sed -E 's/[[:space:]]*\($//' | sort -u)
inline=$(cat $headers | grep -oE 'static inline [^(]*\bhalo_[a-z0-9_]+\(' |
         grep -oE 'halo_[a-z0-9_]+\($' | tr -d '(' | sort -u)
# the module's calls back: NAME in a declaration marked HALO_MODULE_API
backend=""
if [ -n "$src" ]; then
  backend=$(grep -rh --include='*.h' -A2 '^HALO_MODULE_API ' "$src" | tr '\n' ' ' |
            grep -oE 'HALO_MODULE_API [^;(]*\bhalo_[a-z0-9_]+[[:space:]]*[\(\[]' |
            grep -oE 'halo_[a-z0-9_]+[[:space:]]*[\(\[]$' | tr -d '([ ' | sort -u)
  [ "$(echo "$backend" | grep -c .)" -gt 20 ] || { echo "too few HALO_MODULE_API declarations in $src"; exit 1; }
  declared=$(printf '%s\n%s\n' "$declared" "$backend" | sort -u)
fi
fail=0
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
if [ -n "$extra" ]; then echo "exported but not declared in include/:"; echo "$extra"; fail=1; fi
missing=$(comm -13 <(echo "$exported") <(comm -23 <(echo "$declared") <(echo "$inline")))
# types that precede a ( in a declaration (a callback's return type, its name)
missing=$(echo "$missing" | grep -vxE 'halo_status|halo_progress_fn' || true)
if [ -n "$missing" ]; then echo "declared in include/ but not exported:"; echo "$missing"; fail=1; fi
if [ -n "$module" ]; then
  mod=$(nm -D --defined-only "$module" | awk 'NF == 3 {print $3}' | grep -vxE '_init|_fini' | sort -u)
  if [ "$mod" != "halo_cuda_module_table" ]; then
    echo "$module exports more or less than its table:"; echo "$mod"; fail=1
  fi
  # and every halo_ function it calls is one libhalo exports (else it does not load)
  calls=$(nm -D --undefined-only "$module" | awk '{print $NF}' | grep -E '^halo_' | sort -u)
  unresolved=$(comm -23 <(echo "$calls") <(echo "$exported"))
  if [ -n "$unresolved" ]; then
    echo "$module calls what libhalo does not export (mark it HALO_MODULE_API):"
    echo "$unresolved"; fail=1
  fi
fi
[ "$fail" -eq 0 ] && [ "$(echo "$exported" | wc -l)" -gt 50 ] || { [ "$fail" -ne 0 ] || echo "too few exports"; exit 1; }
exit 0
