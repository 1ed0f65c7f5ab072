#!/bin/bash
# Run from (a copy in) the directory holding the build directories; it writes into a subdirectory there.
# docs/BENCHMARKS.md, twentieth session, "The worst commits". As lock20a.sh; wl2 = a first handoff.Mutex
# (signals the first waiter at every release; hands over after 100 us).
cd "$(dirname "$0")"; mkdir -p wl4
C="--engines strata --dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s"
run() { $1/strata bench --strata-bin $1/strata-bench-child --peers-bin $1/strata-bench-peers $C --duration $3 --workload $4 --json wl4/$4-$1-$2.json > wl4/$4-$1-$2.txt 2>&1; }
for r in 1 2 3 4; do
  case $r in 1) o="bin hg wl2";; 2) o="wl2 hg bin";; 3) o="hg wl2 bin";; 4) o="bin wl2 hg";; esac
  for b in $o; do run $b $r 15s oltp_write_only; done
  for b in $o; do run $b $r 10s oltp_insert; done
done
touch wl4/DONE
