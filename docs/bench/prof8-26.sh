#!/bin/bash
# docs/BENCHMARKS.md, "Each direct read woken by the poller" (twenty-sixth session): why sysbench 8x did not
# gain: a 10 s CPU profile (STRATA_BENCH_CPUPROFILE) of base and new2 each at sysbench 8x (2 threads), twice, alternating.
for round in 1 2; do
  case $round in 1) order="base new2";; 2) order="new2 base";; esac
  for m in $order; do
    STRATA_BENCH_CPUPROFILE=$PWD/p8-$m-$round.prof ./$m/strata bench sweep --param table-size --strata-bin ./$m/strata-bench-child \
      --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 10s --keep \
      --strata-page-size 4KiB --strata-r auto --values 8x --engine strata --dir d-sysbench --dataset sysbench \
      --workload oltp_point_select --distribution uniform --json p8-$m-$round.json > p8-$m-$round.txt 2>&1
    echo "$(date -u +%H:%M:%S) p8-$m-$round rc=$?" >> progress
  done
done
touch DONE-p8
