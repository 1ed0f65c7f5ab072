#!/bin/bash
# docs/BENCHMARKS.md, twenty-second session, the first sitting (10:33-10:51; new = 454e1a5). Run from a directory on a real disk holding base/ (8fc6244, the
# session's start) and new/ (the code measured), each with strata, strata-bench-child, strata-bench-peers.
# A: oltp_write_only (uniform keys, 2 threads) from 0.25x to 8x the 64 MiB limit, sysbench rows and JSON events,
#    new Strata (auto R) beside bbolt and Pebble, every point a fresh load.
# B: the same sizes, base Strata alone (auto R).
# C: auto R against fixed R 0.05 and 0.5 at 1x and 4x (sysbench), a fresh load per run.
# D: point reads (oltp_point_select, sysbench, uniform), base against new at 1x and 8x, two rounds alternating.
sweep() { # binaries engines dataset out
  $1/strata bench sweep --param table-size --strata-bin $1/strata-bench-child --peers-bin $1/strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 32MiB --warmup 5s --duration 10s \
   --strata-page-size 4KiB --strata-r ${R:-auto} --values ${SIZES:-0.25x,0.5x,1x,2x,4x,8x} --engine $2 \
   --workload ${WL:-oltp_write_only} --distribution uniform --dataset $3 --json $4.json --plot $4.png > $4.txt 2> $4.err
  echo "$(date -u +%T) done $4" >> progress
}
sweep new strata,bbolt,pebble sysbench A-sysbench
sweep new strata,bbolt,pebble events A-events
sweep base strata sysbench B-sysbench
sweep base strata events B-events
for s in 1x 4x; do for r in auto 0.05 0.5; do R=$r SIZES=$s sweep new strata sysbench C-$s-r$r; done; done
for round in 1 2; do
  case $round in 1) o="base new";; 2) o="new base";; esac
  for n in 2684355 335544; do for b in $o; do
    $b/strata bench --strata-bin $b/strata-bench-child --peers-bin $b/strata-bench-peers --engines strata --dataset sysbench --table-size $n --cache 40MiB --mem-limit 64MiB --warmup 10s --duration 10s --workload oltp_point_select --json D-$b-$n-$round.json > D-$b-$n-$round.txt 2>&1
    echo "$(date -u +%T) done D-$b-$n-$round" >> progress
  done; done
done
touch DONE
