#!/bin/bash
# docs/BENCHMARKS.md, twenty-first session, "Replaced pages leave the pool": new2 (5a6d8d7) against base
# (aa0d24f, the session's start), cached oltp_write_only, three alternating rounds. Run from the directory
# holding the build directories base/ and new2/ (strata, strata-bench-child, strata-bench-peers each).
cd "$(dirname "$0")"; mkdir -p wd2
C="--engines strata --dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s"
run() { $1/strata bench --strata-bin $1/strata-bench-child --peers-bin $1/strata-bench-peers $C --duration $3 --workload $4 --json wd2/$4-$1-$2.json > wd2/$4-$1-$2.txt 2>&1; }
for r in 1 2 3; do
  case $r in 1|3) o="base new2";; 2) o="new2 base";; esac
  for b in $o; do run $b $r 15s oltp_write_only; done
done
touch wd2/DONE
