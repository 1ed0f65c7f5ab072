#!/bin/bash
# docs/BENCHMARKS.md, twenty-first session, "Scratch buffers the collector does not empty": new6 (buflist)
# against new5 (acfc746), oltp_write_only at 4x and 8x the 64 MiB limit (sysbench rows, Strata's cache
# 40 MiB: the write sweep's split), fresh loads, two rounds alternating.
cd "$(dirname "$0")"; mkdir -p gc
run() { $1/strata bench --strata-bin $1/strata-bench-child --peers-bin $1/strata-bench-peers --engines strata --dataset sysbench --table-size $3 --cache 40MiB --mem-limit 64MiB --warmup 5s --duration 10s --workload oltp_write_only --json gc/$1-$3-$2.json > gc/$1-$3-$2.txt 2>&1; }
for r in 1 2; do
  case $r in 1) o="new5 new6";; 2) o="new6 new5";; esac
  for n in 2684355 1342177; do for b in $o; do run $b $r $n; done; done
done
touch gc/DONE
