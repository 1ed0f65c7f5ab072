#!/bin/bash
# docs/BENCHMARKS.md, "A store-wide literal table" (twenty-seventh session): base (b4f1252) against new
# (the literal table: treeless literals, table dictionaries) at the points of issue 9's sweep where
# Strata trails the best peer (point reads, uniform keys, 2 threads: sysbench 2x 4x 8x, events 4x 8x),
# each build on loads it made itself (d-<build>-<dataset>, made on the first run with --keep), bbolt
# beside on sweep25.sh's loads (d-sysbench, d-events); then oltp_write_only at 0.5x and 2x on a fresh
# copy of each build's load (the rewrite's cost when pages are compressed). Three rounds, order
# alternating. Run from a directory holding base/ and new/ (strata, strata-bench-child) and
# strata-bench-peers.
S() { b=$1; shift; ./$b/strata bench sweep --param table-size --strata-bin ./$b/strata-bench-child \
   --peers-bin ./strata-bench-peers --mem-limit 64MiB --cache 32MiB --strata-cache fill --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --distribution uniform "$@"; }
PEERS=${PEERS:-/tmp/s25/sw}
for round in 1 2 3; do
  case $round in 1|3) order="base new";; 2) order="new base";; esac
  for p in sysbench:2x sysbench:4x sysbench:8x events:4x events:8x; do
    ds=${p%%:*}; v=${p##*:}
    for m in $order; do
      mkdir -p d-$m-$ds
      S $m --engine strata --strata-overhead 24MiB --workload oltp_point_select --dataset $ds --values $v --dir d-$m-$ds \
        --json r-$ds-$v-$m-$round.json > r-$ds-$v-$m-$round.txt 2>&1
      echo "$(date -u +%H:%M:%S) r-$ds-$v-$m-$round rc=$?" >> progress
    done
    S base --engine bbolt --workload oltp_point_select --dataset $ds --values $v --dir $PEERS/d-$ds \
      --json b-$ds-$v-bbolt-$round.json > b-$ds-$v-bbolt-$round.txt 2>&1
    echo "$(date -u +%H:%M:%S) b-$ds-$v-bbolt-$round rc=$?" >> progress
  done
  for v in 0.5x 2x; do
    rows=$(case $v in 0.5x) echo 167772;; 2x) echo 671089;; esac)
    for m in $order; do
      if [ ! -d d-$m-sysbench/strata-$rows ]; then
        S $m --engine strata --strata-overhead 24MiB --workload oltp_point_select --dataset sysbench --values $v \
          --dir d-$m-sysbench --warmup 1s --duration 1s > /dev/null 2>&1
      fi
      rm -rf dw; mkdir dw; cp -a d-$m-sysbench/strata-$rows dw/; sync
      S $m --engine strata --strata-overhead 32MiB --workload oltp_write_only --dataset sysbench --values $v --dir dw \
        --json w-$v-$m-$round.json > w-$v-$m-$round.txt 2>&1
      echo "$(date -u +%H:%M:%S) w-$v-$m-$round rc=$?" >> progress
    done
  done
done
touch DONE
