#!/usr/bin/env bash
# CI fuzz smoke: build the libFuzzer targets (HALO_FUZZ, clang, ASan+UBSan)
# in build-fuzz and run each for FUZZ_TIME seconds (default 60) on a copy of
# its seed corpus (tests/fuzz/corpus/TARGET) with its dictionary
# (tests/fuzz/TARGET.dict), as many at once as there are cores, each on
# one core. Fails if any target finds a crash, a leak, a timeout (10 s) or an
# input that takes more than 2 GiB; the inputs are kept in
# build-fuzz/findings. Needs clang and its libFuzzer runtime (Debian:
# clang and libfuzzer-14-dev, installed here when missing and run as root).
set -euo pipefail
cd "$(dirname "$0")/.."
time_each=${FUZZ_TIME:-60}
targets=(fuzz_mmio fuzz_hcsr fuzz_params fuzz_cli fuzz_env fuzz_amg fuzz_wisdom)
build="build-fuzz"

# clang with its libFuzzer runtime: installed here when missing (as root, Debian)
has_fuzzer() {
  echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
    clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1
}
if ! command -v clang >/dev/null || ! has_fuzzer; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && apt-get install -y -qq clang libfuzzer-14-dev >/dev/null
  fi
  has_fuzzer || {
    echo "fuzz.sh: clang with libFuzzer is needed (apt-get install clang libfuzzer-14-dev)" >&2
    exit 1
  }
fi
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DHALO_FUZZ=ON -DHALO_ENABLE_CUDA=OFF \
  -DHALO_ENABLE_PETSC=OFF -DHALO_ENABLE_HYPRE=ON -DBUILD_TESTING=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/configure.log" ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

# Open MPI (fuzz_cli calls MPI_Init) runs as root only when told
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$build/findings" "$build/corpus"
mkdir -p "$build/findings" "$build/corpus"
# one target's run (FUZZ_TIME seconds), its log in $build/TARGET.log
fuzz_one() {
  local t=$1 rc=0
  cp -r "tests/fuzz/corpus/$t" "$build/corpus/$t" # the run adds to the copy
  "$build/$t" -max_total_time="$time_each" -rss_limit_mb=2048 -timeout=10 -close_fd_mask=3 \
    -dict="tests/fuzz/$t.dict" -print_final_stats=1 -artifact_prefix="$build/findings/$t-" \
    "$build/corpus/$t" >"$build/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$build/$t.rc"
}
# as many targets at once as there are cores (each runs on one)
jobs_max=$(nproc)
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  fuzz_one "$t" &
done
wait
failed=()
for t in "${targets[@]}"; do
  rc=$(cat "$build/$t.rc")
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$build/$t.log" | tail -1 || true)
  echo "$t: exit $rc; ${done_line:-no DONE line}"
  if [ "$rc" -ne 0 ] || compgen -G "$build/findings/$t-*" >/dev/null; then
    failed+=("$t")
    grep -E 'ERROR|SUMMARY|Test unit written' "$build/$t.log" || tail -20 "$build/$t.log"
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz.sh: findings in ${failed[*]}: inputs in $build/findings, logs in $build/*.log" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${time_each} s each, no findings"
