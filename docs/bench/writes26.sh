#!/bin/bash
# docs/BENCHMARKS.md, "Each reader woken by the poller" (twenty-sixth session): more rounds of
# reads26.sh's oltp_write_only at 2x (fresh copy of the 2x load for every run).
S() { b=$1; shift; ./$b/strata bench sweep --param table-size --strata-bin ./$b/strata-bench-child \
   --peers-bin ./strata-bench-peers --mem-limit 64MiB --cache 32MiB --strata-cache fill --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --distribution uniform "$@"; }
for round in 4 5 6 7 8; do
  case $round in 4|6|8) order="base new";; *) order="new base";; esac
  for m in $order; do
    rm -rf dw; mkdir dw; cp -a d-sysbench/strata-671089 dw/; sync
    S $m --engine strata --strata-overhead 32MiB --workload oltp_write_only --dataset sysbench --values 2x --dir dw \
      --json w-$m-$round.json > w-$m-$round.txt 2>&1
    echo "$(date -u +%H:%M:%S) w-$m-$round rc=$?" >> progress
  done
done
touch DONE-w
