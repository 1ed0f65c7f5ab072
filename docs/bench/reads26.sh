#!/bin/bash
# docs/BENCHMARKS.md, "Each reader woken by the poller" (twenty-sixth session): direct reads through AIO
# with a shared eventfd and a reaper goroutine (base = the session's start) against an eventfd per read
# in flight, its reader woken by the poller (new), at the I/O-bound points of the sweep (point reads,
# uniform keys, 2 threads) and oltp_write_only at 2x on a fresh copy of the 2x load; bbolt beside the
# reads. Run from a directory holding base/ and new/ (strata, strata-bench-child) and
# strata-bench-peers, with sweep25.sh's loads in d-sysbench and d-events.
S() { b=$1; shift; ./$b/strata bench sweep --param table-size --strata-bin ./$b/strata-bench-child \
   --peers-bin ./strata-bench-peers --mem-limit 64MiB --cache 32MiB --strata-cache fill --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --distribution uniform "$@"; }
for round in 1 2 3; do
  case $round in 1|3) order="base new";; 2) order="new base";; esac
  for p in sysbench:4x sysbench:8x events:8x; do
    ds=${p%%:*}; v=${p##*:}
    for m in $order; do
      S $m --engine strata --strata-overhead 24MiB --workload oltp_point_select --dataset $ds --values $v --dir d-$ds \
        --json r-$ds-$v-$m-$round.json > r-$ds-$v-$m-$round.txt 2>&1
      echo "$(date -u +%H:%M:%S) r-$ds-$v-$m-$round rc=$?" >> progress
    done
    if [ $p != sysbench:8x ]; then
      S base --engine bbolt --workload oltp_point_select --dataset $ds --values $v --dir d-$ds \
        --json b-$ds-$v-bbolt-$round.json > b-$ds-$v-bbolt-$round.txt 2>&1
      echo "$(date -u +%H:%M:%S) b-$ds-$v-bbolt-$round rc=$?" >> progress
    fi
  done
  for m in $order; do
    rm -rf dw; mkdir dw; cp -a d-sysbench/strata-671089 dw/; sync
    S $m --engine strata --strata-overhead 32MiB --workload oltp_write_only --dataset sysbench --values 2x --dir dw \
      --json w-$m-$round.json > w-$m-$round.txt 2>&1
    echo "$(date -u +%H:%M:%S) w-$m-$round rc=$?" >> progress
  done
done
touch DONE
