#!/bin/bash
# docs/BENCHMARKS.md, twenty-third session, "What open iterators cost writes": cached oltp_read_write
# (250,000 rows, cache 128 MiB, limit 224 MiB, 2 threads, 20 s after 3 s) for Strata, bbolt and Pebble,
# two rounds in alternating order, with cached oltp_write_only beside it for Strata (the same commits
# without iterators: db.replaced_fresh and db.replaced_durable per transaction count the copies).
# Run from a directory on a real disk holding strata, strata-bench-child and strata-bench-peers built
# from one revision.
set -u
C="./strata bench --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers"
r() { name=$1; shift; $C "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 20s"
for round in 1 2; do
  order="strata bbolt pebble"; [ $round = 2 ] && order="pebble bbolt strata"
  for e in $order; do
    w=oltp_read_write; [ $e = strata ] && w=oltp_read_write,oltp_write_only
    r rw-$e-$round --engines $e $CACHED --workload $w
  done
done
touch DONE
