#!/bin/bash
# docs/BENCHMARKS.md, "Commit latency at equal load" (seventeenth session): background write-back and
# page frees that yield the processor, the build before (OLD) and after (NEW) side by side, two rounds
# alternating, bbolt beside in the paced runs. OLD and NEW are directories holding strata,
# strata-bench-child and strata-bench-peers of each revision.
set -u
OLD=${OLD:-./old}; NEW=${NEW:-./new}
r() { name=$1; bin=$2; shift 2; $bin/strata bench --strata-bin $bin/strata-bench-child --peers-bin $bin/strata-bench-peers "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB"
IO8="--dataset sysbench --table-size 2684355 --mem-limit 64MiB --warmup 5s --duration 20s --distribution uniform --workload oltp_write_only"
for round in 1 2; do
  order="new old"; [ $round = 2 ] && order="old new"
  for b in $order; do
    bin=$NEW; [ $b = old ] && bin=$OLD
    r paced-$b-$round $bin $CACHED --engines strata --warmup 10s --duration 20s --workload oltp_write_only --rate 15000
    r closed-$b-$round $bin $CACHED --engines strata --warmup 3s --duration 20s --workload oltp_write_only,oltp_insert
    r io-$b-$round $bin $IO8 --engines strata --cache 24MiB
    r io-paced-$b-$round $bin $IO8 --engines strata --cache 24MiB --rate 5000
  done
  r paced-bbolt-$round $NEW $CACHED --engines bbolt --warmup 10s --duration 20s --workload oltp_write_only --rate 15000
done
touch DONE
