#!/bin/bash
# docs/BENCHMARKS.md, thirty-second session: the session's defect fixes (page verification's
# overlap and shortest-length checks, seeks copying their key, ...) against the session's start,
# on sysbench point reads where pages enter the pool all the time: 1x (image hits) and 4x (misses).
# Each build loads its own stores (AB/old/d, AB/new/d; builds in AB/old and AB/new), then three
# rounds in alternating order, 5 s warm-up, 10 s measured, R auto, 2 threads.
AB=${AB:-/tmp/s32/ab}
S="bench sweep --param table-size --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB \
   --strata-page-size 4KiB --values 1x,4x --engine strata --strata-r auto --dataset sysbench --workload oltp_point_select --keep"
for b in old new; do
  (cd $AB/$b && ./strata $S --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers --dir $AB/$b/d \
     --warmup 1s --duration 1s --json $AB/load-$b.json > $AB/load-$b.txt 2>&1)
done
for round in 1 2 3; do
  if [ $((round % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for b in $order; do
    (cd $AB/$b && ./strata $S --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers --dir $AB/$b/d \
       --warmup 5s --duration 10s --json $AB/run-$round-$b.json > $AB/run-$round-$b.txt 2>&1)
  done
done
touch $AB/DONE
