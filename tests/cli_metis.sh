#!/usr/bin/env bash
# halo spmv --partition metis at one rank count: the product in the original
# numbering equals the serial reference (--check) and every strategy gives bit
# for bit the standard exchange, on the bundled square matrices, matrices with
# isolated and empty rows or without edges, an empty one, block-diagonal ones
# (in order: no edge cut at 2 and 4 ranks; interleaved: METIS finds the
# blocks), generated ones, and with helpers; the reported volume is the
# standard plan's ghosts.
# Rectangular matrices are refused with a clear message. Built without METIS
# (HAVE_METIS 0), spmv and simulate fail with the message that says how to
# build it.
# usage: cli_metis.sh HALO NP "MPIEXEC NPFLAG" "MPIFLAGS" OUTDIR HAVE_METIS GRAPHDATA MATRIX...
set -u
halo=$1 np=$2 launcher=$3 flags=$4 out=$5 have=$6 graphs=$7
shift 7
mkdir -p "$out"
fail=0
n=0
k=$((np >= 8 ? 3 : 2))
# a JSON integer field: the first "NAME": N after the line matching AFTER
field() { sed -n "/$2/,\$p" "$1" | grep -m1 "\"$3\":" | tr -dc '0-9'; }

# run CODE TEXT ARGS...: halo spmv ARGS at NP ranks exits with CODE and prints TEXT
run() {
  local code=$1 text=$2
  shift 2
  n=$((n + 1))
  # shellcheck disable=SC2086
  $launcher "$np" $flags "$halo" spmv "$@" --ranks-per-node $k --message-cap 256 --iterations 2 \
    --warmup 1 --json "$out/$n.json" >"$out/$n.log" 2>&1
  local got=$?
  if [ "$got" -ne "$code" ] || ! grep -qF -- "$text" "$out/$n.log"; then
    echo "FAIL: halo spmv $* (np $np): exit $got, expected $code with '$text'; output:"
    cat "$out/$n.log"
    fail=1
    return 1
  fi
  [ "$code" -eq 0 ] || return 0
  grep -q '"passed": true' "$out/$n.json" || { echo "FAIL: $* (np $np): no passed check"; fail=1; }
  local same
  same=$(grep -c '"identical_to_standard": true' "$out/$n.json")
  [ "$same" -eq 4 ] || { echo "FAIL: $* (np $np): $same of 4 strategies identical"; fail=1; }
  local vol ghosts
  vol=$(field "$out/$n.json" '"metis": {' ghosts)
  ghosts=$(field "$out/$n.json" '"strategies"' ghosts)
  [ "$vol" = "$ghosts" ] ||
    { echo "FAIL: $* (np $np): volume $vol, standard plan's ghosts $ghosts"; fail=1; }
  return 0
}

if [ "$have" != 1 ]; then
  msg="partition metis: not compiled in: rebuild with HALO_ENABLE_METIS=ON (Debian: libmetis-dev)"
  run 1 "$msg" --matrix "$graphs/diagonal.mtx" --partition metis
  # shellcheck disable=SC2086
  "$halo" simulate --gen lap2d:8 --partition metis --ranks 4 --ranks-per-node 2 >"$out/sim.log" 2>&1
  got=$?
  if [ "$got" -ne 1 ] || ! grep -qF -- "$msg" "$out/sim.log"; then
    echo "FAIL: halo simulate --partition metis: exit $got, expected 1 with '$msg':"
    cat "$out/sim.log"
    fail=1
  fi
  exit $fail
fi

for m in "$@"; do
  read -r rows cols _ < <(grep -v '^%' "$m" | head -1)
  if [ "$rows" = "$cols" ]; then
    run 0 "check: max relative error" --matrix "$m" --partition metis --check
  else
    run 1 "a graph partition renumbers rows and columns alike and needs a square matrix" \
      --matrix "$m" --partition metis --check
  fi
done
for g in isolated_rows diagonal block_diagonal blocks_interleaved empty; do
  run 0 "check: max relative error" --matrix "$graphs/$g.mtx" --partition metis --check || continue
  if [ "$np" -eq 2 ] || [ "$np" -eq 4 ]; then
    case $g in block_diagonal | blocks_interleaved | diagonal)
      cut=$(field "$out/$n.json" '"metis": {' edge_cut)
      [ "$cut" = 0 ] || { echo "FAIL: $g (np $np): edge cut $cut, expected 0"; fail=1; } ;;
    esac
  fi
done
run 0 "check: max relative error" --gen lap2d:12 --partition metis --check
run 0 "check: max relative error" --gen irregular:500,4 --partition metis --check
run 0 "check: max relative error" --gen lap2d:2 --partition metis --check # more ranks than rows
if [ "$np" -ge 2 ]; then
  run 0 "check: max relative error" --matrix "$graphs/isolated_rows.mtx" --partition metis \
    --helpers 1 --check
  run 0 "check: max relative error" --gen lap3d:6 --partition metis --helpers 1 --check
fi
echo "$n cases"
exit $fail
