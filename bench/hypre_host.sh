#!/usr/bin/env bash
# BoomerAMG-PCG (examples/hypre/amg_solve, an unmodified hypre program) with
# hypre's own exchange and with halo's (LD_PRELOAD=libhalo_hypre.so,
# strategies standard and auto), side by side: each repetition runs the
# three in a rotated order; per repetition the ratio of halo's solve (and
# set-up) time to hypre's, then the medians. Then one run of each with
# HALO_HYPRE_VIEW=1 (hypre's own through the same library with HALO_HYPRE=0)
# for the time in exchanges per level.
#
# usage: bench/hypre_host.sh BUILD_DIR [REPS] [NP] [N] [MORE amg_solve ARGS...]
set -euo pipefail
build=${1:-build}
reps=${2:-7}
np=${3:-2}
n=${4:-40}
shift $(($# < 4 ? $# : 4))
cd "$(dirname "$0")/.."
amg=$build/examples/hypre_amg_solve
lib=$(cd "$build" && pwd)/libhalo_hypre.so
args=(-n "$n" -amg_print 0 -print 0 -repeat 3 "$@")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

one() { # one NAME VARS... : solve_s and setup_s of a run
  local name=$1
  shift
  local xs=()
  for v in "$@"; do xs+=(-x "$v"); done
  scripts/mpirun.sh -n "$np" "${xs[@]}" "$amg" "${args[@]}" >"$out/$name.out" 2>"$out/$name.err"
  grep -o 'setup_s [0-9.]* solve_s [0-9.]*' "$out/$name.err" | awk '{print $2, $4}'
}

echo "# hypre_host: np $np, ${args[*]}, $reps repetitions, commit $(git rev-parse --short HEAD)"
configs=(hypre standard auto)
for r in $(seq 1 "$reps"); do
  line="rep $r"
  for i in 0 1 2; do
    c=${configs[$(((i + r) % 3))]}
    case $c in
    hypre) t=$(one hypre) ;;
    standard) t=$(one standard LD_PRELOAD="$lib" HALO_STRATEGY=standard) ;;
    auto) t=$(one auto LD_PRELOAD="$lib" HALO_STRATEGY=auto) ;;
    esac
    line="$line $c $t"
  done
  echo "$line"
done | tee "$out/reps"
python3 - "$out/reps" <<'EOF'
import sys, statistics as st
rows = []
for line in open(sys.argv[1]):
    w = line.split()[2:]
    d = {w[i]: (float(w[i + 1]), float(w[i + 2])) for i in range(0, len(w), 3)}
    rows.append(d)
med = lambda xs: st.median(xs)
for c in ("hypre", "standard", "auto"):
    print(f"{c:9s} setup median {med([r[c][0] for r in rows])*1e3:9.3f} ms   solve median {med([r[c][1] for r in rows])*1e3:9.3f} ms")
for c in ("standard", "auto"):
    print(f"{c:9s}/hypre  setup ratio median {med([r[c][0]/r['hypre'][0] for r in rows]):.3f}"
          f"   solve ratio median {med([r[c][1]/r['hypre'][1] for r in rows]):.3f}"
          f"   (solve ratios {min(r[c][1]/r['hypre'][1] for r in rows):.3f}-{max(r[c][1]/r['hypre'][1] for r in rows):.3f})")
EOF
echo "# time in exchanges per level (ms, the most of any rank, set-up and 3 solves)"
for c in hypre standard auto; do
  case $c in
  hypre) vars=(LD_PRELOAD="$lib" HALO_HYPRE=0 HALO_HYPRE_VIEW=1) ;;
  *) vars=(LD_PRELOAD="$lib" HALO_STRATEGY=$c HALO_HYPRE_VIEW=1) ;;
  esac
  one view_$c "${vars[@]}" >/dev/null
  echo "## $c"
  grep '^halo_hypre_view:' "$out/view_$c.out" | cut -c17-
done
