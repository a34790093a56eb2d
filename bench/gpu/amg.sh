#!/usr/bin/env bash
# hypre's BoomerAMG-PCG on the GPUs, with hypre's own exchange and with halo's
# (issue 14, GPU part). hypre is not installed on the GPU machines: its public
# source travels as .peer/hypre-src.tar.gz (ignored by git, carried by the
# device tool: carry [".peer"]) and is built here with CUDA, as a shared
# library, with its test driver ij, an unmodified hypre program. Make the
# archive where hypre's repository is (its src/ folder, any commit with CUDA 13
# support, hypre 3.0 or later):
#   git -C HYPRE_REPO archive --format=tar.gz HEAD src > .peer/hypre-src.tar.gz
#   git -C HYPRE_REPO rev-parse --short HEAD > .peer/hypre-commit
#
#   bench/gpu/amg.sh check   build hypre and halo, then ij's BoomerAMG-PCG on the 27-point
#                            Laplacian with and without LD_PRELOAD=libhalo_hypre.so: 2 ranks on
#                            2 GPUs (every strategy; staged, ipc, nccl, auto; virtual nodes of
#                            1 and 2 ranks) and 8 ranks on 2 GPUs (staged, ipc, auto; nodes of
#                            4): the same residual history, iterations and final residual, and
#                            HALO_HYPRE_VIEW's count of the exchanges that went through halo
#   bench/gpu/amg.sh bench   build, then the solve and set-up times of lap3d27 AMG_N^3 (160)
#                            with hypre's exchange and halo's, alternated, AMG_REPS (5) times,
#                            at 2 ranks (2 GPUs), 4 ranks (4 GPUs where the machine has them) and
#                            8 ranks (4 per GPU) as AMG_NP says; the per-level table
#                            of exchanges (HALO_HYPRE_VIEW) of each road; plan set-up against
#                            one PCG iteration (AMG_NP: the rank counts, "2 8")
#   bench/gpu/amg.sh all     both
# AMG_CHECK_S, AMG_CHECK_T, AMG_CHECK_K (strategies, transports, ranks per node of the 2-rank
# check) and AMG_CHECK_8=0 (no 8-rank check) run a part of it; AMG_CASES the bench's roads
# ("hypre halo-auto:auto halo-nccl:nccl halo-ipc:ipc halo-staged:staged"; a road may add
# environment variables, LABEL:TRANSPORT:VAR=VALUE,VAR=VALUE; a label hypre... is hypre's own
# exchange, a label no-exchange... the solve without any exchange, a bound with wrong answers
# (NOX_SYNC=host or device among its variables: the dependencies kept, no data moved):
# bench/gpu/no_exchange.c); AMG_ARGS: more of ij's arguments ("-second_time 1": the set-up and
# solve again, reported as later set-ups + solves); AMG_REUSE=1 keeps hypre's build of an earlier call; AMG_VIEW the roads whose per-package view is printed ("hypre halo-auto"; the last
# one's plan set-up is summed); AMG_MPS=1 runs them
# under CUDA's multi-process service.
# Files under $OUT: amg-summary.md, amg-log.txt, amg-runs.tar.gz (every run's output).
set -uo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
. bench/gpu/common.sh
gpu_script_init amg
B=build-gpu-hypre
HY=/tmp/hypre

build() {
  local t0=$SECONDS
  [ -f .peer/hypre-src.tar.gz ] || { say "no .peer/hypre-src.tar.gz (see the header)"; exit 1; }
  # AMG_REUSE=1: hypre's build of an earlier call on this (warm) machine
  if [ "${AMG_REUSE:-0}" = 1 ] && [ -f $HY/build/HYPRE_config.h ]; then
    say "- hypre: the build of an earlier call"
  else
    rm -rf $HY && mkdir -p $HY && tar -xzf .peer/hypre-src.tar.gz -C $HY
  fi
  if ! run cmake -S $HY/src -B $HY/build -DHYPRE_ENABLE_CUDA=ON -DHYPRE_ENABLE_UMPIRE=OFF \
      -DHYPRE_ENABLE_UNIFIED_MEMORY=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DBUILD_SHARED_LIBS=ON \
      -DHYPRE_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$HY/inst ||
    ! run cmake --build $HY/build -j "$(nproc)" --target HYPRE ij; then
    say "HYPRE BUILD FAILED (see amg-log.txt)"
    tail -30 "$log"
    exit 1
  fi
  # hypre's install wants every test driver built: its headers by hand, flat as installed
  mkdir -p $HY/inst/include
  find $HY/src -path $HY/src/test -prune -o \( -name '*.h' -o -name '*.hpp' \) -print |
    grep -v -E '/(examples|docs|eig_tests)/' | xargs cp -n -t $HY/inst/include
  cp $HY/build/HYPRE_config.h $HY/inst/include/
  HYLIB=$(find $HY/build -name 'libHYPRE.so' | head -1)
  IJ=$(find $HY/build -name ij -type f -perm -u+x | head -1)
  say "- hypre $(cat .peer/hypre-commit 2>/dev/null || echo '(commit unknown)') built with CUDA in $((SECONDS - t0)) s ($IJ)"
  t0=$SECONDS
  if ! run cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DHALO_ENABLE_CUDA=ON -DHALO_ENABLE_NCCL=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DHALO_WERROR=ON -DHALO_ENABLE_PETSC=OFF -DHALO_ENABLE_METIS=OFF \
      -DNVSHMEM_HOME="$NVSHMEM_HOME" -DHALO_ENABLE_NVSHMEM=$([ -n "$NVSHMEM_HOME" ] && echo ON || echo OFF) \
      -DHALO_ENABLE_HYPRE=ON -DHYPRE_INCLUDE_DIR=$HY/inst/include \
      -DHYPRE_LIBRARY=$HYLIB -DBUILD_TESTING=OFF ||
    ! run cmake --build $B -j "$(nproc)" --target halo_hypre; then
    say "HALO BUILD FAILED (see amg-log.txt)"
    tail -30 "$log"
    exit 1
  fi
  grep -q "routes its device exchanges" "$log" || { say "libhalo_hypre built without device support"; exit 1; }
  say "- libhalo_hypre built against it in $((SECONDS - t0)) s"
  # the measurement aid of the road no-exchange (no_exchange.c: the solve without exchanges)
  NOX=/tmp/no_exchange.so
  run mpicc -shared -fPIC -O2 -I$HY/inst/include -o $NOX bench/gpu/no_exchange.c -ldl ||
    say "- no_exchange.so: build FAILED"
}

# ij NAME NP "ENV..." ARGS...: one run of hypre's ij, its output in $runs/NAME.out
ij() {
  local name=$1 np=$2 env=$3
  shift 3
  local xs=()
  for v in $env; do xs+=(-x "$v"); done
  echo "+ [$name] $env mpirun -n $np ij $*" >>"$log"
  [ -n "$NVSHMEM_HOME" ] && xs+=(-x LD_LIBRARY_PATH -x NVSHMEM_REMOTE_TRANSPORT)
  env $env timeout "${AMG_TIMEOUT:-180}" mpirun --oversubscribe --bind-to none -n "$np" -x NCCL_NVLS_ENABLE -x NVSHMEM_DISABLE_NVLS \
    "${xs[@]}" "$IJ" "$@" >"$runs/$name.out" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || { say "- $name: ij exit $rc"; tail -5 "$runs/$name.out" | tee -a "$summary"; }
  return $rc
}

# the lines that must agree: PCG's residual history, iterations, final residual
answer() { grep -E '^ +[0-9]+ +[0-9.e+-]+ +[0-9.e+-]+|Iterations =|Final Relative Residual' "$runs/$1.out"; }

checks=0 failures=0
same() { # REF NAME [WORDS]: WORDS ("3step, nccl") begin every plan's description
  checks=$((checks + 1))
  if [ -n "${3:-}" ] && grep -E '^halo_hypre_view: .* [APR?] +[0-9]+ ' "$runs/$2.out" | grep -v -q -- "  $3"; then
    failures=$((failures + 1))
    say "- $2: a plan is not '$3':"
    grep -E '^halo_hypre_view: .* [APR?] +[0-9]+ ' "$runs/$2.out" | grep -v -- "  $3" | head -2 | tee -a "$summary"
    return
  fi
  if ! diff <(answer "$1") <(answer "$2") >/dev/null || [ -z "$(answer "$1")" ]; then
    failures=$((failures + 1))
    say "- $2: answers differ from $1"
    diff <(answer "$1") <(answer "$2") | head -6 | tee -a "$summary"
    return
  fi
  local line
  line=$(grep '^halo_hypre_view: exchanges through halo:' "$runs/$2.out")
  if ! python3 - "$line" <<'EOF'; then
import re, sys
m = re.search(r"halo: (\d+) forward, (\d+) reverse; of matrices' packages left to hypre: (\d+) "
              r"\((\d+) before their plans", sys.argv[1])
assert m, "no halo_hypre_view summary"
fw, rv, left, before = map(int, m.groups())
assert fw > 0 and rv > 0 and left == before, sys.argv[1]
EOF
    failures=$((failures + 1))
    say "- $2: not every exchange through halo: ${line:-no report}"
    return
  fi
  echo "- $2: same answers; ${line#halo_hypre_view: }" >>"$log"
}

LIB=$PWD/$B/libhalo_hypre.so
AMG=(-solver 1 -27pt -tol 1e-8 -iout 3 ${AMG_ARGS:-})

check() {
  say ""
  say "## Unmodified ij (BoomerAMG-PCG, device memory) with and without halo"
  say ""
  local t0=$SECONDS n=${AMG_CHECK_N:-48}
  ij ref2 2 "CUDA_VISIBLE_DEVICES=0,1" "${AMG[@]}" -n $n $n $n -P 2 1 1 || return
  say "- reference, 2 ranks on 2 GPUs, lap3d27 $n^3: $(grep -m1 'Iterations =' $runs/ref2.out | sed 's/^ *//')"
  for s in ${AMG_CHECK_S:-standard 2step 3step split}; do
    for t in ${AMG_CHECK_T:-staged ipc nccl auto}; do
      for k in ${AMG_CHECK_K:-1 2}; do
        ij "h2_${s}_${t}_k$k" 2 "CUDA_VISIBLE_DEVICES=0,1 LD_PRELOAD=$LIB HALO_STRATEGY=$s HALO_TRANSPORT=$t HALO_RANKS_PER_NODE=$k HALO_MESSAGE_CAP=4096 HALO_HYPRE_VIEW=1" \
          "${AMG[@]}" -n $n $n $n -P 2 1 1 && same ref2 "h2_${s}_${t}_k$k" "$s, ${t/auto/}"
      done
    done
  done
  [ "${AMG_CHECK_8:-1}" = 1 ] && ij ref8 8 "CUDA_VISIBLE_DEVICES=0,1" "${AMG[@]}" -n $n $n $n -P 2 2 2 &&
  {
    say "- reference, 8 ranks on 2 GPUs, lap3d27 $n^3: $(grep -m1 'Iterations =' $runs/ref8.out | sed 's/^ *//')"
    for s in standard 3step split; do
      for t in staged ipc auto; do
        ij "h8_${s}_$t" 8 "CUDA_VISIBLE_DEVICES=0,1 LD_PRELOAD=$LIB HALO_STRATEGY=$s HALO_TRANSPORT=$t HALO_RANKS_PER_NODE=4 HALO_HYPRE_VIEW=1" \
          "${AMG[@]}" -n $n $n $n -P 2 2 2 && same ref8 "h8_${s}_$t" "$s, ${t/auto/}"
      done
    done
    # under MPS, nvshmem with 4 ranks a GPU in NVSHMEM's full mode (each rank 25 % of the SMs),
    # against hypre's own exchange with the same share
    if [ "${AMG_MPS:-0}" = 1 ] && [ -n "$NVSHMEM_HOME" ]; then
      local pct="CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25"
      ij ref8p 8 "CUDA_VISIBLE_DEVICES=0,1 $pct" "${AMG[@]}" -n $n $n $n -P 2 2 2 &&
      for s in standard 3step split; do
        ij "h8_${s}_nvshmem" 8 "CUDA_VISIBLE_DEVICES=0,1 $pct LD_PRELOAD=$LIB HALO_STRATEGY=$s HALO_TRANSPORT=nvshmem HALO_RANKS_PER_NODE=4 HALO_HYPRE_VIEW=1" \
          "${AMG[@]}" -n $n $n $n -P 2 2 2 && same ref8p "h8_${s}_nvshmem" "$s, nvshmem"
      done
    fi
  }
  # halo loaded but off: hypre's exchange, the same answers
  ij h2_off 2 "CUDA_VISIBLE_DEVICES=0,1 LD_PRELOAD=$LIB HALO_HYPRE=0" "${AMG[@]}" -n $n $n $n -P 2 1 1 &&
    { checks=$((checks + 1)); diff <(answer ref2) <(answer h2_off) >/dev/null || { failures=$((failures + 1)); say "- h2_off: answers differ"; }; }
  say "- $checks runs compared, $failures failed ($((SECONDS - t0)) s)"
  say ""
  say "A view of one run (2 ranks; 3step, nccl, nodes of 1 when it ran):"
  say ""
  say '```'
  grep '^halo_hypre_view' "$(ls $runs/h2_3step_nccl_k1.out $runs/h2_*.out 2>/dev/null | head -1)" | tee -a "$summary" >/dev/null
  say '```'
}

bench() {
  local n=${AMG_N:-160} reps=${AMG_REPS:-5}
  say ""
  say "## lap3d27 $n^3, BoomerAMG-PCG (ij defaults on the GPU: PMIS, ext+i, l1-Jacobi, keepT), tol 1e-8"
  say ""
  local cases=(${AMG_CASES:-hypre halo-auto:auto halo-nccl:nccl halo-ipc:ipc halo-staged:staged})
  for np in ${AMG_NP:-2 8}; do
    local P="2 1 1" rpn=1 rows=() vis=0,1 gpus=2
    [ $np -eq 8 ] && P="2 2 2" && rpn=4
    # 4 ranks: on 4 GPUs where the machine has them (a rank each), else 2 a GPU
    [ $np -eq 4 ] && P="2 2 1" && gpus=$(nvidia-smi -L 2>/dev/null | grep -c GPU) &&
      { [ "$gpus" -ge 4 ] && vis=0,1,2,3 && gpus=4 || { gpus=2; rpn=2; }; }
    for r in $(seq 1 "$reps"); do
      for c in "${cases[@]}"; do
        local label=${c%%:*} rest=${c#*:} env="CUDA_VISIBLE_DEVICES=$vis" extra=
        local t=${rest%%:*}
        [[ $rest == *:* ]] && extra=${rest#*:} && extra=${extra//,/ }
        [ $np -eq 8 ] && [ "$t" = nccl ] && continue
        # hypre's own road (a label hypre...) with the library loaded and off times its
        # exchanges per level
        [[ $label == hypre* ]] && env+=" LD_PRELOAD=$LIB HALO_HYPRE=0 HALO_HYPRE_VIEW=1 $extra"
        # the solve without any exchange (no_exchange.c): a bound, wrong answers
        [[ $label == no-exchange* ]] && env+=" LD_PRELOAD=$NOX $extra"
        [[ $label != hypre* ]] && [[ $label != no-exchange* ]] && env+=" LD_PRELOAD=$LIB HALO_TRANSPORT=$t HALO_RANKS_PER_NODE=$rpn HALO_HYPRE_VIEW=1 $extra"
        ij "b${np}_${label}_$r" $np "$env" "${AMG[@]}" -n $n $n $n -P $P
      done
    done
    say "### $np ranks on $gpus GPUs"
    say ""
    for c in "${cases[@]}"; do # each road's first run against hypre's: PCG's residual history
      local lab=${c%%:*} ref=hypre ex=${c#*:}
      [[ $ex == *:* ]] && ex=${ex#*:} || ex=
      [ "$lab" = hypre ] || [[ $lab == no-exchange* ]] || [ ! -f "$runs/b${np}_${lab}_1.out" ] && continue
      # against hypre's road of the same added variables where there is one (MPS's thread
      # percentage changes the SMs that hypre's kernels see, and so its sums' order)
      for h in "${cases[@]}"; do
        local hx=${h#*:}
        [[ $hx == *:* ]] && hx=${hx#*:} || hx=
        [[ ${h%%:*} == hypre* ]] && [ -n "$ex" ] && [ "$hx" = "$ex" ] && ref=${h%%:*}
      done
      [ "$lab" = "$ref" ] && continue
      if [ -n "$(answer "b${np}_${ref}_1")" ] && diff <(answer "b${np}_${ref}_1") <(answer "b${np}_${lab}_1") >/dev/null; then
        say "- $lab: residual history, iterations and final residual the same as $ref's, bit for bit"
      else
        say "- $lab: answers DIFFER from $ref's"
      fi
    done
    say ""
    say "| exchange | iterations | set-up s (median) | solve s (median) | set-up / hypre's | solve / hypre's | set-up + solve / hypre's | ms per iteration | per iteration / hypre's | later set-ups + solves s (-second_time) | / hypre's | solves (s) |"
    say "|---|---|---|---|---|---|---|---|---|---|---|---|"
    python3 - "$runs" "$np" "$reps" "${cases[@]%%:*}" <<'EOF' | tee -a "$summary"
import re, statistics, sys
runs, np_, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
labels = sys.argv[4:]
def grab(path):
    try:
        t = open(path).read()
    except OSError:
        return None
    def all_of(k):
        return [float(x) for x in re.findall(k + r":\s*\n\s*wall clock time = ([0-9.]+)", t)]
    it = re.search(r"Iterations = (\d+)", t)
    su, so = all_of("PCG Setup"), all_of("PCG Solve")
    if not su or not so:
        return None
    # ij's -second_time: the set-up and solve again, after the first
    later = sum(su[1:]) + sum(so[1:]) if len(su) > 1 and len(so) > 1 else None
    return su[0], so[0], it.group(1) if it else "?", later
base = base_it = base_su = base_tot = base_later = None
for lab in labels:
    got = [grab(f"{runs}/b{np_}_{lab}_{r}.out") for r in range(1, reps + 1)]
    got = [g for g in got if g]
    if not got:
        continue
    su = statistics.median(g[0] for g in got)
    so = statistics.median(g[1] for g in got)
    tot = statistics.median(g[0] + g[1] for g in got)
    lat = [g[3] for g in got if g[3] is not None]
    later = statistics.median(lat) if lat else None
    its = got[0][2]
    per = so / int(its) * 1e3 if its.isdigit() and int(its) > 0 else None
    if lab == "hypre":
        base, base_it, base_su, base_tot, base_later = so, per, su, tot, later
    f = lambda a, b: f"{a / b:.3f}" if a is not None and b else "-"
    ps = f"{per:.3f}" if per else "-"
    ls = f"{later:.4f}" if later is not None else "-"
    print(f"| {lab} | {its} | {su:.4f} | {so:.4f} | {f(su, base_su)} | {f(so, base)} | "
          f"{f(tot, base_tot if base else None)} | {ps} | {f(per, base_it)} | {ls} | {f(later, base_later)} | "
          f"{' '.join(f'{g[1]:.4f}' for g in got)} |")
EOF
    say ""
    for lab in ${AMG_VIEW:-hypre halo-auto}; do
      say "Per package, $lab, run 1 (xchg-ms: host time in the exchange calls, most of any rank):"
      say ""
      say '```'
      grep '^halo_hypre_view' "$runs/b${np}_${lab}_1.out" | tee -a "$summary" >/dev/null
      say '```'
      say ""
    done
    local vlab=${AMG_VIEW:-hypre halo-auto}
    vlab=${vlab##* }
    [ -f "$runs/b${np}_${vlab}_1.out" ] && python3 - "$runs/b${np}_${vlab}_1.out" "$vlab" <<'EOF' | tee -a "$summary"
import re, sys
t = open(sys.argv[1]).read()
# per package: ... inter-B forward reverse hypre xchg-ms plan-ms  plan
row = re.compile(r"^halo_hypre_view: .* (\d+) +(\d+) +(\d+) +(\d+) +(\d+\.\d+) +(\d+\.\d+)  ")
plan = sum(float(m.group(6)) for m in map(row.match, t.splitlines()) if m)
so = re.search(r"PCG Solve:\s*\n\s*wall clock time = ([0-9.]+)", t)
it = re.search(r"Iterations = (\d+)", t)
if so and it:
    per = float(so.group(1)) / int(it.group(1)) * 1e3
    print(f"- plan set-up of the hierarchy ({sys.argv[2]}, sum over packages of the most of any rank): "
          f"{plan:.1f} ms; one PCG iteration (one V-cycle and a product): {per:.2f} ms; "
          f"ratio {plan / per:.1f}")
EOF
    say ""
  done
}

{
  echo "# hypre BoomerAMG on $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//')"
  echo
  echo "- commit: $(cat .commit 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) cores; $(mpirun --version 2>&1 | head -1); $(nvcc --version | tail -1)"
} >>"$summary"
build
# AMG_MPS=1: the runs under CUDA's multi-process service (ranks that share a GPU then share one
# context instead of time-slicing theirs), started here and stopped at the end
[ "${AMG_MPS:-0}" = 1 ] && mps_start
case $what in
  check) check ;;
  bench) bench ;;
  all) check; bench ;;
  *) say "unknown: $what"; exit 2 ;;
esac
tar -czf "$OUT/amg-runs.tar.gz" -C /tmp amg-runs
