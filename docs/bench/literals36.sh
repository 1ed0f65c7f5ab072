#!/bin/bash
# docs/BENCHMARKS.md, thirty-sixth session: demotions coded as frames of literals (new, 5e5786c) against
# the code before it (old, 7306748), builds in $AB/old and $AB/new (strata, strata-bench-child):
# sysbench special keys 1.5x (where demotions compress), five rounds in alternating order, and events
# special 1.5x (where the pool must keep the codec), two rounds. Stores of sweep33.sh (LOADS).
AB=${AB:-/tmp/s36/ab}
L=${LOADS:-/tmp/s32/loads}
ROUNDS=${ROUNDS:-5}
S="bench sweep --param table-size --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 16MiB \
   --strata-page-size 4KiB --engine strata --strata-r auto --workload oltp_point_select --keep \
   --warmup 10s --duration 10s"
for round in $(seq 1 $ROUNDS); do
  if [ $((round % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for b in $order; do
    (cd $AB/$b && ./strata $S --strata-bin ./strata-bench-child --dir $L/d-sysbench --dataset sysbench --values 1.5x --distribution special \
       --json $AB/sp-$round-$b.json > $AB/sp-$round-$b.txt 2>&1)
  done
done
for round in 1 2; do
  if [ $((round % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for b in $order; do
    (cd $AB/$b && ./strata $S --strata-bin ./strata-bench-child --dir $L/d-events --dataset events --values 1.5x --distribution special \
       --json $AB/ev-$round-$b.json > $AB/ev-$round-$b.txt 2>&1)
  done
done
touch $AB/DONE
