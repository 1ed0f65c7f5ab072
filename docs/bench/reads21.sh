#!/bin/bash
# twenty-first session: point reads, base (aa0d24f) against fin (the session's final code), sysbench rows
# uniform, 8x (2,684,355 rows) and 1x (335,544) the 64 MiB limit, Strata's cache 40 MiB, fresh loads,
# two rounds alternating.
cd "$(dirname "$0")"; mkdir -p rd
run() { $1/strata bench --strata-bin $1/strata-bench-child --peers-bin $1/strata-bench-peers --engines strata --dataset sysbench --table-size $3 --cache 40MiB --mem-limit 64MiB --warmup 10s --duration 10s --workload oltp_point_select --json rd/$1-$3-$2.json > rd/$1-$3-$2.txt 2>&1; }
for r in 1 2; do
  case $r in 1) o="base fin";; 2) o="fin base";; esac
  for n in 2684355 335544; do for b in $o; do run $b $r $n; done; done
done
touch rd/DONE
