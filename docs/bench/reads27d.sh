#!/bin/bash
# docs/BENCHMARKS.md, "A store-wide literal table" (twenty-seventh session), reads27d.sh: fourth sitting: base
# (b4f1252) against new5 (new4 charging a table dictionary its decoders and the rewrite's scratch, not
# encoders that take the plain ones' place: 1.1 MiB instead of 2.6 MiB on two Ps) at the sysbench
# points, where stores adopt a table dictionary; new5 on reads27c.sh's new4 loads (the same images),
# three rounds alternating, then cached oltp_write_only (0.5x) five rounds.
S() { b=$1; shift; ./$b/strata bench sweep --param table-size --strata-bin ./$b/strata-bench-child \
   --peers-bin ./strata-bench-peers --mem-limit 64MiB --cache 32MiB --strata-cache fill --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --distribution uniform "$@"; }
for round in 1 2 3; do
  case $round in 1|3) order="base new5";; 2) order="new5 base";; esac
  for v in 2x 4x 8x; do
    for m in $order; do
      d=d-$m-sysbench; [ $m = new5 ] && d=d-new4-sysbench
      S $m --engine strata --strata-overhead 24MiB --workload oltp_point_select --dataset sysbench --values $v --dir $d \
        --json r-sysbench-$v-$m-$round.json > r-sysbench-$v-$m-$round.txt 2>&1
      echo "$(date -u +%H:%M:%S) r-sysbench-$v-$m-$round rc=$?" >> progress
    done
  done
done
for round in 1 2 3 4 5; do
  case $round in 1|3|5) order="base new5";; *) order="new5 base";; esac
  for m in $order; do
    d=d-$m-sysbench; [ $m = new5 ] && d=d-new4-sysbench
    rm -rf dw; mkdir dw; cp -a $d/strata-167772 dw/; sync
    S $m --engine strata --strata-overhead 32MiB --workload oltp_write_only --dataset sysbench --values 0.5x --dir dw \
      --json w-0.5x-$m-$round.json > w-0.5x-$m-$round.txt 2>&1
    echo "$(date -u +%H:%M:%S) w-0.5x-$m-$round rc=$?" >> progress
  done
done
touch DONE
