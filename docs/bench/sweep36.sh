#!/bin/bash
# docs/BENCHMARKS.md, thirty-sixth session: issue 9's sweep on the session's final code (demotions
# coded as frames of literals where that pays, direct reads polled before they park). Same settings
# and stores as sweep33.sh (2 threads, 64 MiB limit, Strata's cache 48 MiB, 4 KiB pages; LOADS,
# default /tmp/s32/loads; bbolt loaded full). Run from a directory holding strata,
# strata-bench-child, strata-bench-bbolt and strata-bench-pebble of one revision;
# docs/bench/sweep-goals.py *.json prints the tables.
L=${LOADS:-/tmp/s32/loads}
mkdir -p $L/d-sysbench $L/d-events
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-dir . \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 16MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB"
V="--values 0.25x,0.5x,1x,1.5x,2x,4x,8x"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json --plot $name.png > $name.txt 2> $name.err; rc=$?; echo "$(date -u +%H:%M:%S) end $name rc=$rc" >> progress; }
P="--engine strata,bbolt,pebble --strata-r auto"
for dist in uniform special; do
  run s36-sysbench-point-$dist $P $V --dir $L/d-sysbench --dataset sysbench --workload oltp_point_select --distribution $dist
  run s36-events-point-$dist $P $V --dir $L/d-events --dataset events --workload oltp_point_select --distribution $dist
done
run s36-sysbench-ro-uniform $P $V --dir $L/d-sysbench --dataset sysbench --workload oltp_read_only --distribution uniform
# auto beside fixed R where R matters (the data beyond the frames)
F="--engine strata --strata-r auto,0,0.25,0.5,0.75,0.95 --values 1.5x,4x"
run s36-sysbench-fixed-r $F --dir $L/d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run s36-events-fixed-r $F --dir $L/d-events --dataset events --workload oltp_point_select --distribution uniform
touch S36DONE
