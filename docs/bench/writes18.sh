#!/bin/bash
# docs/BENCHMARKS.md, "Issue 10's goals in one run" (eighteenth session): every goal of issue 10 on one
# build, peers beside, in one sitting. Run from a directory on a real disk holding strata,
# strata-bench-child and strata-bench-peers built from one revision.
#  - cached (250,000 rows, cache 128 MiB, limit 224 MiB, fresh loads): oltp_write_only and oltp_insert
#    against bbolt and Pebble, two rounds in alternating engine order; oltp_read_only against bbolt,
#    eight rounds alternating (8 s each: this host spreads 20–60% between rounds);
#  - durable commits (--sync) with 8 threads, commits per fsync;
#  - I/O-bound (2,684,355 rows, 8x the 64 MiB limit): oltp_write_only against bbolt, three rounds
#    alternating, a fresh copy of each engine's load before every run (the first load is made with
#    --keep and copied to orig/). (It is not: the kept load is io/<engine>, which io/$e-* does not
#    match, so orig/ stays empty and every run loads afresh, in 3.5-5 s. Found in the nineteenth
#    session; the figures of both sessions are fresh loads.)
set -u
C="./strata bench --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers"
r() { name=$1; shift; $C "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB"
for round in 1 2; do
  order="strata bbolt pebble"; [ $round = 2 ] && order="pebble bbolt strata"
  for e in $order; do
    r cached-$e-$round --engines $e $CACHED --warmup 3s --duration 20s --workload oltp_write_only,oltp_insert
  done
done
for round in 1 2 3 4 5 6 7 8; do
  order="strata bbolt"; [ $((round % 2)) = 0 ] && order="bbolt strata"
  for e in $order; do r ro-$round-$e --engines $e $CACHED --warmup 3s --duration 8s --workload oltp_read_only; done
done
r sync8 --engines strata,bbolt,pebble $CACHED --warmup 2s --duration 10s --workload oltp_write_only --sync --threads 8
IO8="--dataset sysbench --table-size 2684355 --mem-limit 64MiB --warmup 5s --duration 20s --distribution uniform --keep --dir io"
if [ ! -d orig ]; then
  mkdir -p orig
  for e in strata bbolt; do
    rm -rf io; cache=24MiB; [ $e = bbolt ] && cache=32MiB
    r io-load-$e $IO8 --engines $e --cache $cache --workload oltp_point_select --duration 1s --warmup 1s
    mv io/$e-* orig/
  done
fi
fresh() { rm -rf io; mkdir io; cp -a orig/$1-* io/; sync; }
for round in 1 2 3; do
  order="strata bbolt"; [ $round = 2 ] && order="bbolt strata"
  for e in $order; do
    cache=24MiB; [ $e = bbolt ] && cache=32MiB
    fresh $e; r io-$e-$round $IO8 --engines $e --cache $cache --workload oltp_write_only
  done
done
touch DONE
