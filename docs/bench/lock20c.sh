#!/bin/bash
# Run from (a copy in) the directory holding the build directories; it writes into a subdirectory there.
# docs/BENCHMARKS.md, twentieth session, "The worst commits". As lock20b.sh; wl3b = handoff.Mutex as
# committed in b839c44 (one signal until the waiter runs).
cd "$(dirname "$0")"; mkdir -p wl5
C="--engines strata --dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s"
run() { $1/strata bench --strata-bin $1/strata-bench-child --peers-bin $1/strata-bench-peers $C --duration $3 --workload $4 --json wl5/$4-$1-$2.json > wl5/$4-$1-$2.txt 2>&1; }
for r in 1 2 3; do
  case $r in 1) o="bin wl2 wl3b";; 2) o="wl3b wl2 bin";; 3) o="wl2 bin wl3b";; esac
  for b in $o; do run $b $r 10s oltp_insert; done
  for b in $o; do run $b $r 15s oltp_write_only; done
done
touch wl5/DONE
