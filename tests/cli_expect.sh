# Sourced by the CLI test scripts: expect CODE TEXT NP ARGS... runs halo ARGS
# on NP ranks and checks its exit status is CODE and TEXT is in its output.
# Needs halo, launcher ("MPIEXEC NPFLAG"), flags and out set; counts the runs
# in n and sets fail=1 on a mismatch.
fail=0
n=0
expect() {
  local code=$1 text=$2 np=$3
  shift 3
  n=$((n + 1))
  # shellcheck disable=SC2086
  $launcher "$np" $flags "$halo" "$@" >"$out/$n.log" 2>&1
  local got=$?
  if [ "$got" -ne "$code" ] || ! grep -qF -- "$text" "$out/$n.log"; then
    echo "FAIL: halo $* (np $np): exit $got, expected $code with '$text'; output:"
    cat "$out/$n.log"
    fail=1
  fi
}
