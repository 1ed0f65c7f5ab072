#!/bin/bash
# docs/BENCHMARKS.md, thirty-second session: issue 10's cached goals against bbolt (writes18.sh's first
# two parts, shortened) after bbolt's load was made to fill its pages: oltp_write_only and oltp_insert,
# two rounds in alternating engine order, 20 s each; oltp_read_only, four rounds alternating, 8 s each.
# 250,000 rows, cache 128 MiB, limit 224 MiB, fresh loads. Run from a directory holding strata,
# strata-bench-child and strata-bench-peers of one revision.
set -u
C="./strata bench --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers"
r() { name=$1; shift; $C "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB"
for round in 1 2; do
  order="strata bbolt"; [ $round = 2 ] && order="bbolt strata"
  for e in $order; do r cached-$e-$round --engines $e $CACHED --warmup 3s --duration 20s --workload oltp_write_only,oltp_insert; done
done
for round in 1 2 3 4; do
  order="strata bbolt"; [ $((round % 2)) = 0 ] && order="bbolt strata"
  for e in $order; do r ro-$round-$e --engines $e $CACHED --warmup 3s --duration 8s --workload oltp_read_only; done
done
touch W32DONE
