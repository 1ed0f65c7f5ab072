#!/bin/bash
# docs/BENCHMARKS.md, thirty-fourth session: promotions no longer verify pages the pool verified when it
# read them (ccf5cbb) against the session's start (81b2bd3), at the point where image hits are most of
# Strata's CPU: sysbench special keys at 2x the 64 MiB limit (sweep33.sh's store, no format change, so
# both builds read the same store), and sysbench uniform 1x. Builds in $AB/old and $AB/new; three rounds
# in alternating order, 10 s warm-up, 10 s measured, R auto, 2 threads.
AB=${AB:-/tmp/s34/ab}
L=${LOADS:-/tmp/s32/loads}
S="bench sweep --param table-size --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 16MiB \
   --strata-page-size 4KiB --engine strata --strata-r auto --dataset sysbench --workload oltp_point_select --keep \
   --dir $L/d-sysbench --warmup 10s --duration 10s"
for round in 1 2 3; do
  if [ $((round % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for b in $order; do
    (cd $AB/$b && ./strata $S --strata-bin ./strata-bench-child --values 2x --distribution special \
       --json $AB/sp-$round-$b.json > $AB/sp-$round-$b.txt 2>&1)
    (cd $AB/$b && ./strata $S --strata-bin ./strata-bench-child --values 1x --distribution uniform \
       --json $AB/u1-$round-$b.json > $AB/u1-$round-$b.txt 2>&1)
  done
done
touch $AB/DONE
