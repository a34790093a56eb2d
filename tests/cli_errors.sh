#!/usr/bin/env bash
# The driver's exit codes and messages on bad command lines and bad input.
# usage: cli_errors.sh HALO "MPIEXEC NPFLAG" "MPIFLAGS" MMDATA OUTDIR
set -u
halo=$1 launcher=$2 flags=$3 data=$4 out=$5
mkdir -p "$out"
# shellcheck source=cli_expect.sh
. "$(dirname "$0")/cli_expect.sh"
expect 2 "usage: mpirun -n P halo COMMAND" 1
expect 0 "commands:" 1 --help
expect 0 "halo 0." 1 --version
expect 2 "unknown command 'spmx'" 2 spmx
expect 0 "--partition rows|nnz" 1 spmv --help
expect 2 "give one of --matrix FILE or --gen SPEC" 2 spmv
expect 2 "give one of --matrix FILE or --gen SPEC" 2 spmv --gen lap2d:4 --matrix x.mtx
expect 2 "unknown option '--bogus'" 2 spmv --gen lap2d:4 --bogus
expect 2 "option --iterations needs a value" 2 spmv --gen lap2d:4 --iterations
expect 2 "--iterations 'ten': expected an integer" 2 spmv --gen lap2d:4 --iterations ten
expect 2 "--iterations '-1': expected an integer" 2 spmv --gen lap2d:4 --iterations=-1
expect 2 "--tol '-1': expected a number >= 0" 2 spmv --gen lap2d:4 --tol -1
expect 2 "unknown partition 'scotch' (known: rows, nnz, metis)" 2 spmv --gen lap2d:4 --partition scotch
expect 2 "unknown strategy 'fast'" 2 spmv --gen lap2d:4 --strategy fast
expect 1 "unknown kind" 2 spmv --gen cube:4
expect 1 "N must be a positive integer" 3 spmv --gen lap3d:0
expect 1 "rank 0: cannot open" 3 spmv --matrix "$data/does-not-exist.mtx"
expect 1 "index_zero.mtx: line 4: row index 0 out of range" 3 spmv --matrix "$data/index_zero.mtx"
expect 1 "duplicate entry" 2 spmv --matrix "$data/duplicate.mtx"
expect 0 "check: max relative error" 2 spmv --matrix "$data/good_duplicates.mtx" --sum-duplicates --check --iterations 2
expect 0 "standard" 3 spmv --gen lap2d:6 --iterations 2 --warmup 0
expect 1 "cannot write" 2 spmv --gen lap2d:6 --iterations 1 --json /nonexistent-dir/x.json
# --unit: an exchange of K values of a type per entry, its ghosts checked bit for bit for every
# strategy (virtual nodes of 1: the node-aware strategies forward; a wrong ghost exits 3);
# bad units refused
expect 0 "unit int64:7 (56 bytes an entry" 3 spmv --gen lap3d27:8 --unit int64:7 --ranks-per-node 1 --iterations 3
expect 0 "unit complex:3 (48 bytes an entry" 4 spmv --gen irregular:300,2 --unit complex:3 --ranks-per-node 2 --iterations 3
expect 2 "--unit 'quad:2': TYPE or TYPE:K" 2 spmv --gen lap2d:4 --unit quad:2
expect 2 "--unit 'float:0': TYPE or TYPE:K" 2 spmv --gen lap2d:4 --unit float:0
expect 1 "cannot write /nonexistent-dir/x.csv: No such file" 2 spmv --gen lap2d:6 --iterations 1 --csv /nonexistent-dir/x.csv
expect 2 "option --csv needs a value (see halo spmv --help)" 2 spmv --gen lap2d:6 --csv
# a write that fails once the file is open (a link to /dev/full): the reason, and the
# path left as it was (only a regular file half written is removed)
if [ -c /dev/full ]; then
  ln -sf /dev/full "$out/full.csv"
  expect 1 "cannot write $out/full.csv: No space left on device" 2 spmv --gen lap2d:6 --iterations 1 --csv "$out/full.csv"
  expect 1 "cannot write $out/full.csv: No space left on device" 1 simulate --gen lap2d:6 --ranks 4 --ranks-per-node 2 --json "$out/full.csv"
  [ -L "$out/full.csv" ] || { echo "FAIL: a failed write removed $out/full.csv, a link to /dev/full"; fail=1; }
  # the same for the matrix writers of halo convert
  for ext in mtx hcsr; do
    ln -sf /dev/full "$out/full.$ext"
    expect 1 "cannot write '$out/full.$ext'" 1 convert --gen lap2d:40 "$out/full.$ext"
    [ -L "$out/full.$ext" ] || { echo "FAIL: a failed convert removed $out/full.$ext, a link to /dev/full"; fail=1; }
  done
fi
# halo convert never writes over its input (a link to it included)
printf '%%%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.5\n2 2 2.5\n' >"$out/same.mtx"
ln -sf "$out/same.mtx" "$out/same-link.mtx"
expect 2 "are the same file: writing would destroy the input" 1 convert "$out/same.mtx" "$out/same-link.mtx"
expect 2 "are the same file" 1 convert "$out/same.mtx" "$out/same.mtx"
grep -q "2 2 2.5" "$out/same.mtx" || { echo "FAIL: convert IN IN changed its input"; fail=1; }
# usage errors say where to look
expect 2 "--iterations 'ten': expected an integer in [0, 1000000000] (see halo spmv --help)" 2 spmv --gen lap2d:4 --iterations ten
expect 2 "--partition: unknown partition 'scotch' (known: rows, nnz, metis) (see halo spmv --help)" 1 spmv --gen lap2d:4 --partition scotch
expect 2 "--memory 'gpu': host or device (see halo spmv --help)" 1 spmv --gen lap2d:4 --memory gpu
expect 2 "--index-bytes '5': 4 or 8 (see halo convert --help)" 1 convert --index-bytes 5 a.mtx b.hcsr
expect 2 "--fit 'cubic': expected relative or absolute (see halo params measure --help)" 1 params measure --fit cubic
# node-aware options
expect 2 "--ranks-per-node '-1': expected an integer in [0," 2 spmv --gen lap2d:4 --ranks-per-node -1
expect 2 "--message-cap '4': expected an integer in [8," 2 spmv --gen lap2d:4 --message-cap 4
expect 2 "unknown strategy '4step' (known: standard, 2step, 3step, split, auto)" 2 spmv --gen lap2d:4 --strategy 4step
expect 0 "split" 3 spmv --gen lap2d:6 --strategy split --ranks-per-node 2 --message-cap 8 --iterations 1
expect 0 "2step" 4 spmv --gen irregular:300,2 --ranks-per-node 3 --no-dedup --iterations 1
HALO_RANKS_PER_NODE=x expect 1 "HALO_RANKS_PER_NODE='x' (option ranks_per_node): expected 1 or more" 2 spmv --gen lap2d:4
# the components' settings: listed, given by --settings or HALO_SETTINGS, checked by name
expect 0 "ipc.signal (ipc): transport ipc" 1 spmv --list-settings
expect 0 "values: 0 to 32, a power of 2 or 0; default: 0 (from the mean row length); variable HALO_SPMV_GROUP" 1 spmv --list-settings
expect 0 "standard" 2 spmv --gen lap2d:6 --iterations 1 --strategy standard --settings "spmv.group=8, ipc.signal=host"
expect 1 "settings: unknown setting 'spmv.grup' (known: spmv.kernel," 2 spmv --gen lap2d:6 --iterations 1 --settings spmv.grup=8
expect 1 "settings: ipc.signal=gpu: expected host, device or auto" 2 spmv --gen lap2d:6 --iterations 1 --settings ipc.signal=gpu
HALO_SETTINGS="spmv.unroll=3" expect 1 "HALO_SETTINGS: spmv.unroll=3: expected 1 to 4, a power of 2" 2 spmv --gen lap2d:6 --iterations 1
# the simulator
expect 2 "give one of --matrix FILE or --gen SPEC" 1 simulate
expect 2 "give --ranks P and --ranks-per-node K" 1 simulate --gen lap2d:4
expect 2 "--ranks '0': expected an integer in [1," 1 simulate --gen lap2d:4 --ranks 0 --ranks-per-node 2
expect 2 "unknown option '--iterations'" 1 simulate --gen lap2d:4 --ranks 4 --ranks-per-node 2 --iterations 3
expect 0 "--ranks-per-node K" 1 simulate --help
expect 1 "cannot open" 1 simulate --matrix "$data/does-not-exist.mtx" --ranks 2 --ranks-per-node 1
expect 1 "index_zero.mtx: line 4" 1 simulate --matrix "$data/index_zero.mtx" --ranks 2 --ranks-per-node 1
expect 0 "split" 1 simulate --gen lap3d27:6 --ranks 64 --ranks-per-node 4
expect 1 "cannot write /nonexistent-dir/s.csv" 1 simulate --gen lap2d:6 --ranks 4 --ranks-per-node 2 --csv /nonexistent-dir/s.csv
expect 0 "4 ranks on 2 nodes" 2 simulate --gen lap2d:6 --ranks 4 --ranks-per-node 2
expect 0 "auto chose standard, host: the lowest modeled time of 7 candidates (parameters lassen): *standard/host" 1 simulate --gen lap3d27:6 --ranks 8 --ranks-per-node 4 --strategy auto
expect 0 "auto chose standard, host: the lowest modeled time of 7 candidates (parameters lassen): *standard/host" 1 simulate --gen lap3d27:6 --ranks 8 --ranks-per-node 4 --strategy standard,auto
# set-up-aware (issue 42): NCCL's communicator (0.3 s a rank, 2.4 s) outweighs 100 uses of a
# faster exchange, not a million
expect 0 "the lowest modeled cost (set-up + 100 uses x time) of 21 candidates (parameters lassen): *standard/staged 31.2 us, standard/ipc 70 us, standard/nccl 20.3 us + set-up 2.4 s" 1 simulate --gen lap3d27:6 --ranks 8 --ranks-per-node 4 --strategy auto --params lassen --gpus-per-node 4
expect 0 "auto chose standard, nccl: the lowest modeled cost (set-up + 1000000 uses x time)" 1 simulate --gen lap3d27:6 --ranks 8 --ranks-per-node 4 --strategy auto --params lassen --gpus-per-node 4 --expected-uses 1000000
expect 2 "--expected-uses '0': expected an integer" 1 simulate --gen lap3d27:6 --ranks 8 --strategy auto --expected-uses 0
expect 1 "parameter set 'nowhere': not a built-in one (lassen, h200)" 1 simulate --gen lap3d27:6 --ranks 8 --ranks-per-node 4 --strategy auto --params nowhere
# halo params
printf 'name = x\n' >"$out/missing.params"
printf 'name = x\nbogus = 1\n' >"$out/unknown.params"
expect 2 "usage: mpirun -n P halo params COMMAND" 1 params
expect 0 "measure   measure and fit" 1 params --help
expect 2 "unknown command 'fit' (commands: measure, show" 1 params fit
expect 0 "--ranks-per-node K" 1 params measure --help
expect 2 "unknown option '--bogus' (see halo params measure --help)" 2 params measure --bogus
expect 2 "--min-bytes 4096 must be below --max-bytes 1024" 2 params measure --min-bytes 4096 --max-bytes 1024
expect 2 "--short-max 512 must be below --eager-max 256" 2 params measure --short-max 512 --eager-max 256
expect 2 "the rendezvous range of sizes holds 1 of the 23 sizes" 2 params measure --max-bytes 16384
expect 2 "needs at least 2 ranks" 1 params measure --max-bytes 65536
expect 2 "--fit 'cubic': expected relative or absolute" 2 params measure --fit cubic
expect 2 "--name 'a b': expected a word" 2 params measure --name "a b"
expect 2 "option --iterations needs a value" 2 params measure --iterations
expect 2 "--iterations '0': expected an integer in [1," 2 params measure --iterations 0
expect 2 "--ranks-per-node '0': expected an integer in [1," 2 params measure --ranks-per-node 0
expect 1 "--base: parameter set 'nowhere': not a built-in one" 3 params measure --base nowhere
expect 1 "cannot write /nonexistent-dir/p.txt" 2 params measure -o /nonexistent-dir/p.txt
expect 0 "name = lassen" 1 params show lassen
expect 2 "give a set: halo params show NAME|FILE" 2 params show
expect 2 "unknown option '--all'" 1 params show --all
expect 1 "not a built-in one (lassen, h200), nor a file" 2 params show nowhere
expect 1 "missing.params: missing key 'sockets_per_node'" 1 params show "$out/missing.params"
expect 1 "unknown.params:2: unknown key 'bogus'" 2 params show "$out/unknown.params"
echo "$n cases"
exit $fail
