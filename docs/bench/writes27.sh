#!/bin/bash
# docs/BENCHMARKS.md, "A store-wide literal table" (twenty-seventh session): cached oltp_write_only
# (sysbench 0.5x, 2 threads) base (b4f1252) against new2 (ede4662), each on a fresh copy of its own load
# (reads27.sh's d-base-sysbench, d-new-sysbench: the new load has a table dictionary), five rounds
# alternating, then a 10 s CPU profile of each (STRATA_BENCH_CPUPROFILE).
S() { b=$1; shift; ./$b/strata bench sweep --param table-size --strata-bin ./$b/strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --distribution uniform "$@"; }
for round in 1 2 3 4 5; do
  case $round in 1|3|5) order="base new2";; *) order="new2 base";; esac
  for m in $order; do
    d=$m; [ $m = new2 ] && d=new
    rm -rf dw; mkdir dw; cp -a d-$d-sysbench/strata-167772 dw/; sync
    S $m --engine strata --strata-overhead 32MiB --workload oltp_write_only --dataset sysbench --values 0.5x --dir dw \
      --json cw-$m-$round.json > cw-$m-$round.txt 2>&1
    echo "$(date -u +%H:%M:%S) cw-$m-$round rc=$?" >> progress
  done
done
for m in base new2; do
  d=$m; [ $m = new2 ] && d=new
  rm -rf dw; mkdir dw; cp -a d-$d-sysbench/strata-167772 dw/; sync
  STRATA_BENCH_CPUPROFILE=$PWD/cw-$m.prof S $m --engine strata --strata-overhead 32MiB --workload oltp_write_only \
    --dataset sysbench --values 0.5x --dir dw --duration 10s --json cwp-$m.json > cwp-$m.txt 2>&1
  echo "$(date -u +%H:%M:%S) cwp-$m rc=$?" >> progress
done
touch DONE-w
