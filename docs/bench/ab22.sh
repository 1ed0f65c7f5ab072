#!/bin/bash
# docs/BENCHMARKS.md, twenty-second session: oltp_write_only (uniform, 2 threads, 64 MiB limit, cache 32 MiB,
# auto R, 4 KiB pages) at single sizes, base (8fc6244), fin1 (4620216) and fin2 (8490976), a fresh load per
# run, two rounds in rotating order. Run from a directory holding base/, fin1/ and fin2/. ORDER1, ORDER2 and
# POINTS choose other builds and points (abfin1-22.sh).
one() { # bin dataset size out
  $1/strata bench sweep --param table-size --strata-bin $1/strata-bench-child --peers-bin $1/strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 32MiB --warmup 5s --duration 10s \
   --strata-page-size 4KiB --strata-r auto --values $3 --engine strata \
   --workload oltp_write_only --distribution uniform --dataset $2 --json $4.json > $4.txt 2> $4.err
  echo "$(date -u +%T) $4 $(grep -E '^ +[0-9.]+x' $4.txt | head -1 | cut -c1-120)" >> progress
}
for round in 1 2; do
  case $round in 1) o=${ORDER1:-base fin1 fin2};; 2) o=${ORDER2:-fin2 fin1 base};; esac
  for p in ${POINTS:-sysbench:0.5x sysbench:1x sysbench:4x sysbench:8x events:0.5x events:2x}; do
    for b in $o; do one $b ${p%%:*} ${p##*:} $b-${p%%:*}-${p##*:}-$round; done
  done
done
touch DONE
