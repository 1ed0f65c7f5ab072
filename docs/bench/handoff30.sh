#!/bin/bash
# docs/BENCHMARKS.md, twentieth session, "The worst commits": HandoffAfter 100 us (final = b839c44) against 30 us
# (h30 = the code at 2df0e8d, the same lock code, with the constant changed; not kept). Run from the directory holding the two build directories.
cd "$(dirname "$0")"; mkdir -p h30r
C="--engines strata --dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s"
run() { $1/strata bench --strata-bin $1/strata-bench-child --peers-bin $1/strata-bench-peers $C --duration $3 --workload $4 --json h30r/$4-$1-$2.json > h30r/$4-$1-$2.txt 2>&1; }
for r in 1 2 3; do
  o="final h30"; [ $r = 2 ] && o="h30 final"
  for b in $o; do run $b $r 10s oltp_insert; done
  for b in $o; do run $b $r 15s oltp_write_only; done
done
touch h30r/DONE
