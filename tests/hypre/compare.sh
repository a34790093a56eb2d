#!/usr/bin/env bash
# Unmodified hypre programs run with and without halo
# (LD_PRELOAD=libhalo_hypre.so): their residual histories, iteration counts,
# final residuals and solution checksums must be the same, byte for byte
# (halo's plans of hypre's packages move each value unchanged, with every
# strategy), and HALO_HYPRE_VIEW must show that every exchange of values of
# the solve went through halo.
#
# usage: compare.sh MPIEXEC BUILD_DIR SOURCE_DIR SUITE [BUILD]
# suites: strategies solvers files petsc fallback (hypre's plain build), builds (BUILD 64:
# bigint, 64m: mixed-int; libhalo_hypre$BUILD on hypre$BUILD_amg_solve, a reduced set)
set -uo pipefail
mpiexec=$1 build=$2 src=$3 suite=$4 variant=${5:-}
lib=$build/libhalo_hypre$variant.so
amg=$build/examples/hypre${variant}_amg_solve
ksp=$build/examples/petsc/petsc_ksp_lap27
view_prefix=halo_hypre_view:
# shellcheck source=../compare_lib.sh
source "$(dirname "$0")/../compare_lib.sh"

# through NAME [AFTER]: the report shows exchanges through halo; of matrices'
# packages, none left to hypre but those made before the package's plan (at
# most AFTER a package: HALO_HYPRE_PLAN_AFTER of NAME's run, 1 by default);
# and every exchange of values of other packages inside an AMG set-up (the
# solve's exchanges all went through halo, but a package's first)
through() {
  local line head
  line=$(grep '^halo_hypre_view: exchanges through halo:' "$work/$1.out")
  head=$(grep -m1 '^halo_hypre_view: [0-9]* package' "$work/$1.out")
  if [ -z "$line" ] || [ -z "$head" ]; then
    fail "$1: no halo_hypre_view summary"
    return
  fi
  if ! python3 - "$line" "$head" "${2:-1}" <<'EOF'; then
import re, sys
m = re.search(r"halo: (\d+) forward, (\d+) reverse; of matrices' packages left to hypre: (\d+) "
              r"\((\d+) before their plans: HALO_HYPRE_PLAN_AFTER\); "
              r"of other packages: (\d+) of values \((\d+) in AMG set-ups\)", sys.argv[1])
assert m, sys.argv[1]
fw, rv, left, before, other, other_setup = map(int, m.groups())
packages = int(re.search(r"view: (\d+) package", sys.argv[2]).group(1))
after = int(sys.argv[3])
assert fw > 0 and rv > 0, f"forward {fw}, reverse {rv}: expected both through halo"
assert left == before, f"{left - before} exchanges of matrices' packages left to hypre after their plans"
assert before <= after * packages, f"{before} exchanges before plans, {packages} packages (at most {after} each)"
assert other == other_setup, f"{other - other_setup} exchanges of values outside AMG set-ups left to hypre"
EOF
    fail "$1: $line"
  fi
}

# plans NAME WORD: every plan line of the report names WORD (its strategy)
plans() {
  local bad
  bad=$(grep '^halo_hypre_view: ' "$work/$1.out" | grep -E ' [AP?R] +[0-9]+ ' | grep -v -- "$2" | head -3)
  if [ -n "$bad" ] || ! grep -qE '^halo_hypre_view: .* [AP] +[0-9]+ ' "$work/$1.out"; then
    fail "$1: plans not all '$2' (or none):"
    echo "$bad" | sed 's/^/    /'
  fi
}

# the integer sizes (HYPRE_Int, HYPRE_BigInt) and the name of a build of hypre by its suffix
sizes() {
  case $1 in
  64) echo "8 8 bigint" ;;
  64m) echo "4 8 mixed-int" ;;
  *) echo "4 4 plain" ;;
  esac
}

# cross: the example built against each other build of hypre present, under this build's
# library: said once on stderr, naming both builds' integer sizes and the library to load
# instead; every call handed to hypre untouched, the same answers, nothing through halo
cross() {
  local v prog mine theirs
  read -r -a mine <<<"$(sizes "$variant")"
  for v in "" 64 64m; do
    [ "$v" = "$variant" ] && continue
    prog=$build/examples/hypre${v}_amg_solve
    [ -x "$prog" ] || continue
    read -r -a theirs <<<"$(sizes "$v")"
    run x${v}_ref 3 -- "$prog" -n 12 -amg_print 0 || continue
    run x${v}_halo 3 LD_PRELOAD="$lib" HALO_HYPRE_VIEW=1 -- "$prog" -n 12 -amg_print 0 || continue
    same x${v}_ref x${v}_halo
    grep -qF "halo-hypre: the loaded libHYPRE's HYPRE_Int has ${theirs[0]} bytes and its HYPRE_BigInt ${theirs[1]} bytes (a ${theirs[2]} build of hypre); libhalo_hypre$variant was built for ${mine[0]} and ${mine[1]} (a ${mine[2]} build): load libhalo_hypre$v.so instead" \
      "$work/x${v}_halo.err" ||
      fail "x${v}_halo: no message naming both builds' sizes: $(head -3 "$work/x${v}_halo.err")"
    [ "$(grep -c '^halo-hypre:' "$work/x${v}_halo.err")" -eq 1 ] ||
      fail "x${v}_halo: not one message: $(head -5 "$work/x${v}_halo.err")"
    if grep -q '^halo_hypre_view: exchanges through halo: [1-9]' "$work/x${v}_halo.out"; then
      fail "x${v}_halo: exchanges went through halo on another build of hypre"
    fi
  done
}

case $suite in
strategies)
  # BoomerAMG-PCG, l1-Jacobi and hybrid Gauss-Seidel, 1-4 ranks, virtual
  # nodes of 1-4 ranks, every strategy
  for relax in 18 6; do
    for np in 1 2 3 4; do
      ref=pcg_r${relax}_np$np
      run $ref $np -- "$amg" -n 14 -relax $relax -amg_print 0 || continue
      for s in standard 2step 3step split; do
        for k in 1 2 4; do
          [ $k -gt $np ] && continue
          name=${ref}_${s}_k$k
          run $name $np LD_PRELOAD="$lib" HALO_STRATEGY=$s HALO_RANKS_PER_NODE=$k \
            HALO_MESSAGE_CAP=64 HALO_HYPRE_VIEW=1 -- "$amg" -n 14 -relax $relax -amg_print 0 || continue
          same $ref $name
          through $name
          plans $name "$s,"
        done
      done
    done
  done
  # 8 ranks on a small grid: coarse levels where ranks have no rows or no
  # neighbours
  run empty_ref 8 -- "$amg" -n 6 -amg_print 0 &&
    for s in standard 3step split; do
      run empty_$s 8 LD_PRELOAD="$lib" HALO_STRATEGY=$s HALO_RANKS_PER_NODE=4 HALO_HYPRE_VIEW=1 \
        -- "$amg" -n 6 -amg_print 0 || continue
      same empty_ref empty_$s
      through empty_$s
      # a P with fewer columns than ranks: ranks that own no coarse entry
      awk '$1 == "halo_hypre_view:" && $4 == "P" && $6 + 0 < 8 { found = 1 } END { exit !found }' \
        "$work/empty_$s.out" || fail "empty_$s: no level with ranks that own no coarse entries"
    done
  ;;
solvers)
  # GMRES, BoomerAMG alone, other coarsening and interpolation (classical
  # interpolation makes P's package from A's), auto: a plan per level
  for np in 2 4; do
    for args in "-solver gmres" "-solver amg -tol 1e-7" "-coarsen 6 -interp 0 -relax 3" \
        "-solver gmres -coarsen 8 -interp 0 -relax 8"; do
      tag=$(echo "$args" | tr -c 'a-z0-9' _)
      run s_${tag}_np$np $np -- "$amg" -n 12 $args -amg_print 0 || continue
      for s in standard split auto; do
        run s_${tag}_np${np}_$s $np LD_PRELOAD="$lib" HALO_STRATEGY=$s HALO_RANKS_PER_NODE=2 \
          HALO_HYPRE_VIEW=1 -- "$amg" -n 12 $args -amg_print 0 || continue
        same s_${tag}_np$np s_${tag}_np${np}_$s
        through s_${tag}_np${np}_$s
      done
      plans s_${tag}_np${np}_auto "modeled" # the model, or the trial of its close candidates
    done
  done
  ;;
files)
  # bundled matrices: GMRES on non-symmetric ones, PCG on SPD ones
  for m in sherman3:gmres pde2961:gmres bcsstk13:pcg 1138_bus:pcg; do
    f=${m%%:*} solver=${m##*:}
    for np in 2 3; do
      run f_${f}_np$np $np -- "$amg" -f "$src/matrices/$f.mtx" -solver $solver -maxit 30 -amg_print 0 || continue
      for s in standard 3step; do
        run f_${f}_np${np}_$s $np LD_PRELOAD="$lib" HALO_STRATEGY=$s HALO_RANKS_PER_NODE=2 \
          HALO_HYPRE_VIEW=1 -- "$amg" -f "$src/matrices/$f.mtx" -solver $solver -maxit 30 -amg_print 0 || continue
        same f_${f}_np$np f_${f}_np${np}_$s
        through f_${f}_np${np}_$s
      done
    done
  done
  ;;
petsc)
  # an unmodified PETSc program with -pc_type hypre (PETSc's libpetsc calls
  # libHYPRE, which calls halo)
  if [ ! -x "$ksp" ]; then
    echo "SKIP: no PETSc example"
    exit 0
  fi
  for np in 2 4; do
    run p_np$np $np -- "$ksp" -n 14 -pc_type hypre -ksp_monitor || continue
    for s in standard 2step; do
      run p_np${np}_$s $np LD_PRELOAD="$lib" HALO_STRATEGY=$s HALO_RANKS_PER_NODE=2 HALO_HYPRE_VIEW=1 \
        -- "$ksp" -n 14 -pc_type hypre -ksp_monitor || continue
      same p_np$np p_np${np}_$s
      through p_np${np}_$s
    done
  done
  ;;
fallback)
  run fb_ref 3 -- "$amg" -n 12 -amg_print 0 || exit 1
  # halo off: everything to hypre, still counted
  run fb_off 3 LD_PRELOAD="$lib" HALO_HYPRE=0 HALO_HYPRE_VIEW=1 -- "$amg" -n 12 -amg_print 0 &&
    same fb_ref fb_off &&
    { grep -q '^halo_hypre_view: .*halo off' "$work/fb_off.out" &&
      grep -q '^halo_hypre_view: exchanges through halo: 0 forward, 0 reverse; of matrices. packages left to hypre: [1-9]' "$work/fb_off.out" ||
      fail "fb_off: the report does not show halo off with every exchange left to hypre"; }
  # bad settings: a message on stderr, hypre's own exchange, same answers
  for bad in HALO_STRATEGY=sideways HALO_MESSAGE_CAP=3 HALO_RANKS_PER_NODE=-2 HALO_HYPRE=maybe \
      HALO_HYPRE_PLAN_AFTER=-1 HALO_HYPRE_PLAN_AFTER=2x; do
    name=fb_${bad%%=*}
    run $name 3 LD_PRELOAD="$lib" "$bad" HALO_HYPRE_VIEW=1 -- "$amg" -n 12 -amg_print 0 || continue
    same fb_ref $name
    grep -q "halo-hypre: .*${bad%%=*}" "$work/$name.err" ||
      fail "$name: no message naming ${bad%%=*} on stderr: $(head -3 "$work/$name.err")"
    if grep -q '^halo_hypre_view: exchanges through halo: [1-9]' "$work/$name.out"; then
      fail "$name: exchanges went through halo with a bad setting"
    fi
  done
  # every exchange of a package through halo, its first too: none left to hypre
  run fb_after0 3 LD_PRELOAD="$lib" HALO_HYPRE_PLAN_AFTER=0 HALO_HYPRE_VIEW=1 -- "$amg" -n 12 -amg_print 0 &&
    same fb_ref fb_after0 && through fb_after0 0 &&
    { grep -q "^halo_hypre_view: exchanges through halo: [1-9][0-9]* forward, [0-9]* reverse; of matrices. packages left to hypre: 0 " "$work/fb_after0.out" ||
      fail "fb_after0: exchanges left to hypre with HALO_HYPRE_PLAN_AFTER=0"; }
  # a package's first 3 exchanges hypre's: same answers, at most 3 a package left to hypre
  run fb_after3 3 LD_PRELOAD="$lib" HALO_HYPRE_PLAN_AFTER=3 HALO_HYPRE_VIEW=1 -- "$amg" -n 12 -amg_print 0 &&
    same fb_ref fb_after3 && through fb_after3 3
  # white space around a value is not part of it (issue 44 item 6): taken, through halo
  run fb_space 3 LD_PRELOAD="$lib" "HALO_STRATEGY= 3step " "HALO_HYPRE_VIEW= 1" -- "$amg" -n 12 -amg_print 0 &&
    same fb_ref fb_space && through fb_space
  # the bigint and mixed-int builds of hypre (the same release, Debian's libhypre64-dev and
  # libhypre64m-dev) under the adapter built for the plain one
  cross
  # linked before -lHYPRE instead of preloaded: the same
  run fb_linked 3 HALO_HYPRE_VIEW=1 -- "$build/tests/hypre_amg_solve_linked" -n 12 -amg_print 0 &&
    same fb_ref fb_linked && through fb_linked
  ;;
builds)
  # libhalo_hypre$variant on the example built against the same build of hypre: a reduced
  # strategies and solvers suite (1-4 ranks, virtual nodes of 2, classical interpolation: P's
  # package from A's), then the examples of the other builds refused
  if [ ! -x "$amg" ] || [ ! -f "$lib" ]; then
    fail "no $amg or $lib"
  else
    for np in 2 4; do
      ref=b_np$np
      run $ref $np -- "$amg" -n 14 -relax 18 -amg_print 0 || continue
      for s in standard 3step split; do
        name=${ref}_$s
        run $name $np LD_PRELOAD="$lib" HALO_STRATEGY=$s HALO_RANKS_PER_NODE=2 HALO_MESSAGE_CAP=64 \
          HALO_HYPRE_VIEW=1 -- "$amg" -n 14 -relax 18 -amg_print 0 || continue
        same $ref $name
        through $name
        plans $name "$s,"
      done
    done
    args="-n 12 -solver gmres -coarsen 6 -interp 0 -relax 3 -amg_print 0"
    # shellcheck disable=SC2086
    run b_classical 3 -- "$amg" $args &&
      run b_classical_auto 3 LD_PRELOAD="$lib" HALO_STRATEGY=auto HALO_RANKS_PER_NODE=2 \
        HALO_HYPRE_VIEW=1 -- "$amg" $args &&
      same b_classical b_classical_auto && through b_classical_auto
    cross
  fi
  ;;
*)
  echo "unknown suite $suite"
  exit 2
  ;;
esac

echo "$runs runs, $fails failures"
[ "$fails" -eq 0 ]
