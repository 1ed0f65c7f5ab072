#!/bin/bash
# docs/BENCHMARKS.md, "Direct reads on this host: AIO against pread(2)" (twenty-fifth session), second
# sitting: docs/bench/pread25.diff applied to 03302a8 adds STRATA_EXP_MODE=lone (a blocking pread(2)
# when no other direct read is under way, AIO otherwise) to pread24.diff's aio and hybrid. Point reads
# as pread25.sh, and oltp_write_only at 2x (2 threads) on a fresh copy of the 2x load for every run.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --distribution uniform --engine strata"
for round in 1 2 3; do
  case $round in 1) order="aio lone hybrid";; 2) order="lone hybrid aio";; 3) order="hybrid aio lone";; esac
  for p in sysbench:4x sysbench:8x events:8x; do
    ds=${p%%:*}; v=${p##*:}
    for m in $order; do
      STRATA_EXP_MODE=$m $S --strata-overhead 24MiB --workload oltp_point_select --dataset $ds --values $v --dir d-$ds \
        --json f-$ds-$v-$m-$round.json > f-$ds-$v-$m-$round.txt 2>&1
      echo "$(date -u +%H:%M:%S) f-$ds-$v-$m-$round rc=$?" >> progress
    done
  done
  for m in $order; do
    rm -rf dw; mkdir dw; cp -a d-sysbench/strata-671089 dw/; sync
    STRATA_EXP_MODE=$m $S --strata-overhead 32MiB --workload oltp_write_only --dataset sysbench --values 2x --dir dw \
      --json w-$m-$round.json > w-$m-$round.txt 2>&1
    echo "$(date -u +%H:%M:%S) w-$m-$round rc=$?" >> progress
  done
done
touch DONE-b
