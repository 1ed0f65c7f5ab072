#!/bin/bash
# docs/BENCHMARKS.md, "A store-wide literal table" (twenty-seventh session), fixedr27.sh: cached
# oltp_write_only (sysbench 0.5x, 2 threads) with R fixed at 0.5 and at 0.95 instead of auto, base
# (b4f1252) against new5 (7ebec91's code), on reads27d.sh's loads, three rounds each, order alternating.
S() { b=$1; shift; ./$b/strata bench sweep --param table-size --strata-bin ./$b/strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --distribution uniform "$@"; }
for r in 0.5 0.95; do
  for round in 1 2 3; do
    case $round in 2) order="new5 base";; *) order="base new5";; esac
    for m in $order; do
      d=d-$m-sysbench; [ $m = new5 ] && d=d-new4-sysbench
      rm -rf dw; mkdir dw; cp -a $d/strata-167772 dw/; sync
      S $m --strata-r $r --engine strata --strata-overhead 32MiB --workload oltp_write_only --dataset sysbench --values 0.5x \
        --dir dw --json fw$r-0.5x-$m-$round.json > fw$r-0.5x-$m-$round.txt 2>&1
      echo "$(date -u +%H:%M:%S) fw$r-$m-$round rc=$?" >> progress
    done
  done
done
touch DONE-f
