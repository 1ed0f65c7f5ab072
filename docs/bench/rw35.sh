#!/bin/bash
# docs/BENCHMARKS.md, thirty-fifth session: snapshots without path copies. Cached oltp_read_write (4 range
# scans, each an iterator over a snapshot, and 10 point reads, then 4 writes per transaction; 250,000 rows,
# cache 128 MiB, limit 224 MiB, 2 threads, 20 s after 3 s, rw23.sh's settings), the session's start
# (7287c6b, in $AB/old: commits copy the path of every page an open iterator froze) against a later build
# (in $AB/$NEW: commits change such pages in place, leaving a version for the snapshot); strata and
# strata-bench-child in each. Three rounds in alternating order (rounds $FIRST..$FIRST+2).
# Run as: rw35.sh (a87dabd in $AB/new), then the same loop for rounds 4-7 (FIRST=4 gives 4-6);
# NEW=final PREFIX=rwf rw35.sh (the final code, e96a176, in $AB/final).
set -u
AB=${AB:-/tmp/s35/ab}
NEW=${NEW:-new}
PREFIX=${PREFIX:-rw}
FIRST=${FIRST:-1}
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 20s"
for round in $FIRST $((FIRST + 1)) $((FIRST + 2)); do
  order="old $NEW"; [ $((round % 2)) = 0 ] && order="$NEW old"
  for b in $order; do
    (cd $AB/$b && ./strata bench --strata-bin ./strata-bench-child --engines strata $CACHED \
       --workload oltp_read_write --json $AB/$PREFIX-$b-$round.json > $AB/$PREFIX-$b-$round.txt 2> $AB/$PREFIX-$b-$round.err)
    echo "$(date -u +%H:%M:%S) $PREFIX-$b-$round rc=$?" >> $AB/progress
  done
done
touch $AB/DONE
