# What the comparisons of unmodified programs with and without halo share
# (tests/petsc/compare.sh, tests/hypre/compare.sh): sourced after setting
# mpiexec and view_prefix (the first word of the lines halo's report adds).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
runs=0

fail() {
  echo "FAIL: $*"
  fails=$((fails + 1))
}

# run NAME NP [VAR=VALUE ... --] PROGRAM ARGS...: stdout to $work/NAME.out,
# stderr to .err; the variables go to every rank (mpiexec -x); an LD_PRELOAD
# keeps the test's own after it (the sanitizer build's, tests/CMakeLists.txt)
run() {
  local name=$1 np=$2
  shift 2
  local envs=() i
  for ((i = 1; i <= $#; i++)); do
    if [ "${!i}" = "--" ]; then
      for ((; i > 1; i--)); do
        if [[ $1 == LD_PRELOAD=* && -n ${LD_PRELOAD:-} ]]; then
          envs+=(-x "$1:$LD_PRELOAD")
        else
          envs+=(-x "$1")
        fi
        shift
      done
      shift
      break
    fi
    [[ ${!i} =~ ^[A-Z_][A-Z0-9_]*= ]] || break
  done
  runs=$((runs + 1))
  if ! timeout 120 "$mpiexec" -n "$np" --oversubscribe "${envs[@]}" "$@" >"$work/$name.out" 2>"$work/$name.err"; then
    fail "$name: exit status $? ($*)"
    sed 's/^/    /' "$work/$name.err" | head -20
    return 1
  fi
}

strip_view() { grep -v "^$view_prefix" "$1"; }

# same A B: every line but halo's report the same, byte for byte
same() {
  if ! diff <(strip_view "$work/$1.out") <(strip_view "$work/$2.out") >"$work/diff" 2>&1; then
    fail "$2 differs from $1:"
    head -10 "$work/diff" | sed 's/^/    /'
  fi
}
