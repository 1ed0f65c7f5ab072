#!/bin/bash
# docs/BENCHMARKS.md, twenty-first session, "The worst commits left": new5 (acfc746: WAL files and segments freed
# gradually, pausing between steps) against new2 (5a6d8d7), cached oltp_write_only and oltp_insert, four alternating rounds.
# Run from the directory holding the build directories new2/ and new5/.
cd "$(dirname "$0")"; mkdir -p wd5
C="--engines strata --dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s"
run() { $1/strata bench --strata-bin $1/strata-bench-child --peers-bin $1/strata-bench-peers $C --duration $3 --workload $4 --json wd5/$4-$1-$2.json > wd5/$4-$1-$2.txt 2>&1; }
for r in 1 2 3 4; do
  case $r in 1|3) o="new2 new5";; 2|4) o="new5 new2";; esac
  for b in $o; do run $b $r 15s oltp_write_only; done
  for b in $o; do run $b $r 10s oltp_insert; done
done
touch wd5/DONE
