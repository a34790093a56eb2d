#!/usr/bin/env bash
# Every option a command of the driver accepts is in its --help: the names
# are taken from the parser's source (args_take, args_flag, and strcmp on
# argv), function by function, and looked up as words in the help text. Each
# help ends with the line that points to the guide (HALO_TOOL_GUIDE).
# usage: cli_help.sh HALO "MPIEXEC NPFLAG" "MPIFLAGS" TOOLS_SRC OUTDIR
set -u
halo=$1 launcher=$2 flags=$3 src=$4 out=$5
mkdir -p "$out"
fail=0

# options FILE FUNCTION: the option names parsed in FUNCTION's body (from its
# definition at the start of a line to the next line that is a lone '}')
options() {
  awk -v f="$2" '
    $0 ~ "^[a-z].*[ *]" f "\\(" && $0 !~ ";$" { on = 1 }
    on { print }
    on && /^}/ { exit }' "$src/$1" |
    grep -oE '(args_take|args_flag)\([^,]*, *"-[-a-zA-Z0-9]*"|strcmp\(argv\[[^]]*\], *"-[-a-zA-Z0-9]*"' |
    grep -oE '"-[-a-zA-Z0-9]*"' | tr -d '"' | sort -u
}

# check "CMD WORDS" FILE:FUNCTION...: each option of the functions in the
# help of halo CMD WORDS
check() {
  local words=$1 name log opts="" o
  shift
  name=$(echo "help $words" | tr ' ' '_')
  log=$out/$name.txt
  # shellcheck disable=SC2086
  if ! $launcher 1 $flags "$halo" $words --help >"$log" 2>&1; then
    echo "FAIL: halo $words --help exits with an error:"
    cat "$log"
    fail=1
    return
  fi
  if ! tail -n 1 "$log" | grep -q "docs/README.md"; then
    echo "FAIL: halo $words --help does not end with the guide's line (docs/README.md)"
    fail=1
  fi
  for spec in "$@"; do
    o=$(options "${spec%%:*}" "${spec##*:}")
    if [ -z "$o" ]; then
      echo "FAIL: no option found in ${spec##*:} of ${spec%%:*} (has the parser changed?)"
      fail=1
    fi
    opts="$opts $o"
  done
  for o in $opts; do
    if ! grep -qE -- "(^|[^-[:alnum:]])$o([^-[:alnum:]]|\$)" "$log"; then
      echo "FAIL: halo $words --help does not mention $o"
      fail=1
    fi
  done
  echo "halo${words:+ $words} --help: $(echo "$opts" | wc -w) options"
}

check "" halo.c:main
check "spmv" cmd_spmv.c:cmd_spmv driver.c:args_common
check "simulate" cmd_simulate.c:run driver.c:args_common
check "convert" cmd_convert.c:cmd_convert
check "params" cmd_params.c:cmd_params
check "params measure" cmd_params.c:parse_measure
check "params show" cmd_params.c:cmd_show
# halo amg exists in a build with hypre (else it says it is not compiled in)
# shellcheck disable=SC2086
if $launcher 1 $flags "$halo" --help 2>/dev/null | grep -q "^  amg "; then
  check "amg" cmd_amg.c:parse
fi
exit $fail
