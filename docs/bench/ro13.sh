#!/bin/bash
# docs/BENCHMARKS.md, issue 10's cached oltp_read_only goal (>= 1.0x bbolt) at the 4 KiB default:
# 250,000 sysbench rows, cache 128 MiB, limit 224 MiB, fresh loads, Strata and bbolt in three
# rounds in alternating order. Run from a directory holding strata, strata-bench-child and
# strata-bench-peers built from one revision.
C="./strata bench --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers"
R="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 10s --workload oltp_read_only"
for round in 1 2 3; do
  if [ $round = 2 ]; then order="bbolt strata"; else order="strata bbolt"; fi
  for e in $order; do
    $C --engines $e $R --json ro-$round-$e.json > ro-$round-$e.txt 2> ro-$round-$e.err
    echo "$(date -u +%H:%M:%S) ro-$round-$e rc=$?" >> progress
  done
done
