#!/bin/bash
# docs/BENCHMARKS.md, "Each direct read woken by the poller" (twenty-sixth session): lz4 against zstd (the
# default) at the I/O-bound points where Strata trails bbolt: sysbench 4x, events 8x; 1376702 with
# reaper26.diff (STRATA_AIO_MODE unset: the repository's reads). Loads with --codec lz4 are made in
# d-lz4-<dataset> on the first run (--keep); sweep25.sh's loads in d-sysbench and d-events.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --distribution uniform --engine strata --workload oltp_point_select"
for round in 1 2 3; do
  case $round in 1|3) order="lz4 zstd";; 2) order="zstd lz4";; esac
  for p in sysbench:4x events:8x; do
    ds=${p%%:*}; v=${p##*:}
    for c in $order; do
      if [ $c = lz4 ]; then dir=d-lz4-$ds; extra="--codec lz4"; else dir=d-$ds; extra=""; fi
      mkdir -p $dir
      $S $extra --dataset $ds --values $v --dir $dir --json c-$ds-$v-$c-$round.json > c-$ds-$v-$c-$round.txt 2>&1
      echo "$(date -u +%H:%M:%S) c-$ds-$v-$c-$round rc=$?" >> progress
    done
  done
done
touch DONE
