#!/bin/bash
set -u
# docs/BENCHMARKS.md, thirty-fifth session: rw35.sh again with the final build in $AB/final (old: 7287c6b).
AB=/tmp/s35/ab
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 20s"
for round in 1 2 3; do
  order="old final"; [ $round = 2 ] && order="final old"
  for b in $order; do
    (cd $AB/$b && ./strata bench --strata-bin ./strata-bench-child --engines strata $CACHED \
       --workload oltp_read_write --json $AB/rwf-$b-$round.json > $AB/rwf-$b-$round.txt 2> $AB/rwf-$b-$round.err)
    echo "$(date -u +%H:%M:%S) rwf-$b-$round rc=$?" >> $AB/progress
  done
done
touch $AB/DONE3
