#!/bin/bash
# docs/BENCHMARKS.md, thirty-fifth session: snapshots without path copies. Cached oltp_read_write (4 range
# scans, each an iterator over a snapshot, and 10 point reads, then 4 writes per transaction; 250,000 rows,
# cache 128 MiB, limit 224 MiB, 2 threads, 20 s after 3 s, rw23.sh's settings), the session's start
# (7287c6b: commits copy the path of every page an open iterator froze) against the change (commits
# change such pages in place, leaving a version for the snapshot). Builds in $AB/old and $AB/new (strata
# and strata-bench-child); three rounds in alternating order.
set -u
AB=${AB:-/tmp/s35/ab}
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 20s"
for round in 1 2 3; do
  order="old new"; [ $round = 2 ] && order="new old"
  for b in $order; do
    (cd $AB/$b && ./strata bench --strata-bin ./strata-bench-child --engines strata $CACHED \
       --workload oltp_read_write --json $AB/rw-$b-$round.json > $AB/rw-$b-$round.txt 2> $AB/rw-$b-$round.err)
    echo "$(date -u +%H:%M:%S) rw-$b-$round rc=$?" >> $AB/progress
  done
done
touch $AB/DONE
