#!/bin/bash
# docs/BENCHMARKS.md, "A store-wide literal table" (twenty-seventh session), third sitting: base
# (b4f1252) against new4 (the final code: encoders leave literals raw, the rewrite codes them once, review fixes), reads27.sh's
# points (point reads, uniform keys, 2 threads, bbolt beside on sweep25.sh's loads) and oltp_write_only
# at 0.5x (cached) and 2x, each build on loads it made itself (d-base-*, d-new4-*), three rounds, order
# alternating; then two more rounds of the cached writes alone.
S() { b=$1; shift; ./$b/strata bench sweep --param table-size --strata-bin ./$b/strata-bench-child \
   --peers-bin ./strata-bench-peers --mem-limit 64MiB --cache 32MiB --strata-cache fill --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --distribution uniform "$@"; }
PEERS=${PEERS:-/tmp/s25/sw}
writes() { round=$1; v=$2; shift 2
  rows=$(case $v in 0.5x) echo 167772;; 2x) echo 671089;; esac)
  for m in "$@"; do
    if [ ! -d d-$m-sysbench/strata-$rows ]; then
      S $m --engine strata --strata-overhead 24MiB --workload oltp_point_select --dataset sysbench --values $v \
        --dir d-$m-sysbench --warmup 1s --duration 1s > /dev/null 2>&1
    fi
    rm -rf dw; mkdir dw; cp -a d-$m-sysbench/strata-$rows dw/; sync
    S $m --engine strata --strata-overhead 32MiB --workload oltp_write_only --dataset sysbench --values $v --dir dw \
      --json w-$v-$m-$round.json > w-$v-$m-$round.txt 2>&1
    echo "$(date -u +%H:%M:%S) w-$v-$m-$round rc=$?" >> progress
  done
}
for round in 1 2 3; do
  case $round in 1|3) order="base new4";; 2) order="new4 base";; esac
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
  writes $round 0.5x $order
  writes $round 2x $order
done
for round in 4 5; do
  case $round in 4) order="new4 base";; 5) order="base new4";; esac
  writes $round 0.5x $order
done
touch DONE
