#!/bin/bash
# twenty-first session: the applier's read-ahead at 1x (sysbench 335,544 rows, cache 32 MiB, limit 64 MiB):
# new7 (bdb3e07), vA (deferDepth 1), vB (readGroupPages reads missing batches' pages only).
cd "$(dirname "$0")"; mkdir -p dd
run() { $1/strata bench --strata-bin $1/strata-bench-child --peers-bin $1/strata-bench-peers --engines strata --dataset sysbench --table-size 335544 --cache 32MiB --mem-limit 64MiB --warmup 5s --duration 10s --workload oltp_write_only --json dd/$1-$2.json > dd/$1-$2.txt 2>&1; }
for r in 1 2; do
  case $r in 1) o="new7 vA vB";; 2) o="vB vA new7";; esac
  for b in $o; do run $b $r; done
done
touch dd/DONE
