#!/bin/bash
# docs/BENCHMARKS.md, "Commit latency at equal load" (seventeenth session): oltp_write_only paced
# (--rate, an open loop) so that Strata and bbolt serve the same transactions a second, their
# latencies compared at that load, two rounds in alternating order, fresh loads.
#  - I/O-bound: 2,684,355 rows, 8x the 64 MiB limit, at 2,500 txn/s (about 70% of bbolt's most)
#    and Strata alone at 5,000 (about 65% of its most);
#  - cached: 250,000 rows, cache 128 MiB, limit 224 MiB, at 15,000 txn/s (about 70% of bbolt's most).
# Run from a directory on a real disk holding strata, strata-bench-child and strata-bench-peers.
set -u
C="./strata bench --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers"
r() { name=$1; shift; $C "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
IO8="--dataset sysbench --table-size 2684355 --mem-limit 64MiB --warmup 5s --duration 20s --distribution uniform --workload oltp_write_only"
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 20s --workload oltp_write_only"
for round in 1 2; do
  order="strata bbolt"; [ $round = 2 ] && order="bbolt strata"
  for e in $order; do
    cache=24MiB; [ $e = bbolt ] && cache=32MiB
    r io-paced-$e-$round $IO8 --engines $e --cache $cache --rate 2500
    r cached-paced-$e-$round $CACHED --engines $e --rate 15000
  done
  r io-paced5k-strata-$round $IO8 --engines strata --cache 24MiB --rate 5000
done
touch DONE
