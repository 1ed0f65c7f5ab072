#!/bin/bash
# docs/BENCHMARKS.md, "Direct reads on this host: AIO against pread(2)" (twenty-fifth session): the
# twenty-fourth session's experiment (docs/bench/pread24.diff applied to 03302a8; STRATA_EXP_MODE aio =
# the repository's behaviour, pread = every direct read a blocking pread(2), hybrid = pread while fewer
# than GOMAXPROCS-1 reads block) on the Intel host, at the I/O-bound points of the sweep where Strata
# fell behind bbolt: sysbench 4x and 8x, events 8x, point reads, uniform keys, 2 threads, three rounds
# in rotating order. Run from the build directory, with sweep25.sh's loads in d-sysbench and d-events.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --distribution uniform --engine strata --workload oltp_point_select"
for round in 1 2 3; do
  case $round in 1) order="aio pread hybrid";; 2) order="pread hybrid aio";; 3) order="hybrid aio pread";; esac
  for p in sysbench:4x sysbench:8x events:8x; do
    ds=${p%%:*}; v=${p##*:}
    for m in $order; do
      STRATA_EXP_MODE=$m $S --dataset $ds --values $v --dir d-$ds --json e-$ds-$v-$m-$round.json > e-$ds-$v-$m-$round.txt 2>&1
      echo "$(date -u +%H:%M:%S) e-$ds-$v-$m-$round rc=$?" >> progress
    done
  done
done
touch DONE
