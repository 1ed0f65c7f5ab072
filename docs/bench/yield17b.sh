#!/bin/bash
# docs/BENCHMARKS.md, "Commit latency at equal load" (seventeenth session): the review's fixes to the
# yields (a commit's own frees do not yield; the cleaner yields per batch, holding no pin) against the
# first version (d836bfe), two rounds alternating: paced cached updates and closed-loop cached writes.
# OLD and NEW are directories holding strata, strata-bench-child and strata-bench-peers of each revision.
set -u
OLD=${OLD:-./old}; NEW=${NEW:-./new}
r() { name=$1; bin=$2; shift 2; $bin/strata bench --strata-bin $bin/strata-bench-child --peers-bin $bin/strata-bench-peers "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --engines strata"
for round in 1 2; do
  order="new old"; [ $round = 2 ] && order="old new"
  for b in $order; do
    bin=$NEW; [ $b = old ] && bin=$OLD
    r paced-$b-$round $bin $CACHED --warmup 10s --duration 20s --workload oltp_write_only --rate 15000
    r closed-$b-$round $bin $CACHED --warmup 3s --duration 20s --workload oltp_write_only,oltp_insert
  done
done
touch DONE
