#!/bin/bash
# docs/BENCHMARKS.md, "Each direct read woken by the poller" (twenty-sixth session), second sitting: base
# (1376702) against new2 (9f15326: the change as committed, with its review fixes and the controller's
# confirmation hold), reads26.sh's point reads with 2 threads (rounds 4-6) and with 4 threads (rounds
# 1-3), alternating order; then a 10 s CPU profile of new2 at sysbench 4x, 2 threads (p4new.prof).
S() { b=$1; shift; ./$b/strata bench sweep --param table-size --strata-bin ./$b/strata-bench-child \
   --peers-bin ./strata-bench-peers --mem-limit 64MiB --cache 32MiB --strata-cache fill --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --distribution uniform "$@"; }
for round in 4 5 6; do
  case $round in 4|6) order="base new2";; 5) order="new2 base";; esac
  for p in sysbench:4x sysbench:8x events:8x; do
    ds=${p%%:*}; v=${p##*:}
    for m in $order; do
      S $m --engine strata --strata-overhead 24MiB --workload oltp_point_select --dataset $ds --values $v --dir d-$ds \
        --json r-$ds-$v-$m-$round.json > r-$ds-$v-$m-$round.txt 2>&1
      echo "$(date -u +%H:%M:%S) r-$ds-$v-$m-$round rc=$?" >> progress
    done
  done
done
for round in 1 2 3; do
  case $round in 1|3) order="base new2";; 2) order="new2 base";; esac
  for p in sysbench:4x sysbench:8x events:8x; do
    ds=${p%%:*}; v=${p##*:}
    for m in $order; do
      S $m --threads 4 --engine strata --strata-overhead 24MiB --workload oltp_point_select --dataset $ds --values $v --dir d-$ds \
        --json t4-$ds-$v-$m-$round.json > t4-$ds-$v-$m-$round.txt 2>&1
      echo "$(date -u +%H:%M:%S) t4-$ds-$v-$m-$round rc=$?" >> progress
    done
  done
done
STRATA_BENCH_CPUPROFILE=$PWD/p4new.prof ./new2/strata bench sweep --param table-size --strata-bin ./new2/strata-bench-child \
  --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 10s --keep \
  --strata-page-size 4KiB --strata-r auto --values 4x --engine strata --dir d-sysbench --dataset sysbench \
  --workload oltp_point_select --distribution uniform --json p4new.json > p4new.txt 2>&1
touch DONE-b
