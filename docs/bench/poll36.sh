#!/bin/bash
# docs/BENCHMARKS.md, thirty-sixth session: polled reads (a build in $D/on) against parked reads (the
# build before them, 5e5786c, in $D/off), Strata alone: sysbench special 1.5x and 4x, uniform 8x, events
# uniform 8x; two rounds in alternating order. Each variant of the polling rule in the table was a build
# in $D/on run against the same $D/off. Stores of sweep33.sh (LOADS).
D=${D:-/tmp/s36/spin2}
L=${LOADS:-/tmp/s32/loads}
S="bench sweep --param table-size --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 16MiB \
   --strata-page-size 4KiB --engine strata --strata-r auto --workload oltp_point_select --keep --warmup 10s --duration 10s"
for round in 1 2; do
  if [ $((round % 2)) = 1 ]; then order="off on"; else order="on off"; fi
  for b in $order; do
    (cd $D/$b && ./strata $S --strata-bin ./strata-bench-child --dir $L/d-sysbench --dataset sysbench --values 1.5x,4x --distribution special --json $D/sp-$round-$b.json > $D/sp-$round-$b.txt 2>&1)
    (cd $D/$b && ./strata $S --strata-bin ./strata-bench-child --dir $L/d-sysbench --dataset sysbench --values 8x --distribution uniform --json $D/un-$round-$b.json > $D/un-$round-$b.txt 2>&1)
    (cd $D/$b && ./strata $S --strata-bin ./strata-bench-child --dir $L/d-events --dataset events --values 8x --distribution uniform --json $D/ev-$round-$b.json > $D/ev-$round-$b.txt 2>&1)
  done
done
touch $D/DONE
