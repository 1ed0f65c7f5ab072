#!/bin/bash
# docs/BENCHMARKS.md, thirty-third session: issue 10's I/O-bound goals (oltp_write_only >= 2x bbolt,
# write amplification <= 35) against bbolt loaded as full as Strata (the thirty-second session's
# harness fix; writes18.sh measured them against bbolt's half-full load) and in its own binary.
# writes18.sh's I/O-bound part: 2,684,355 rows (8x the 64 MiB limit), Strata's cache 24 MiB, every
# run on a fresh load, two rounds in alternating order. Run from a directory on a real disk holding
# strata, strata-bench-child and strata-bench-bbolt built from one revision.
set -u
C="./strata bench --strata-bin ./strata-bench-child --peers-dir ."
r() { name=$1; shift; $C "$@" --json $name.json > $name.txt 2> $name.err; rc=$?; echo "$(date -u +%H:%M:%S) $name rc=$rc" >> progress; }
IO8="--dataset sysbench --table-size 2684355 --mem-limit 64MiB --warmup 5s --duration 20s --distribution uniform"
for round in 1 2; do
  order="strata bbolt"; [ $round = 2 ] && order="bbolt strata"
  for e in $order; do
    cache=24MiB; [ $e = bbolt ] && cache=32MiB
    rm -rf io; r io-$e-$round $IO8 --dir io --engines $e --cache $cache --workload oltp_write_only
  done
done
rm -rf io
touch DONE
