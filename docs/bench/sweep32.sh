#!/bin/bash
# docs/BENCHMARKS.md, thirty-second session: issue 9's sweep of point reads (uniform keys, both data
# sets) after bbolt's load was made to fill its pages (it filled them half, its file twice its data).
# Same settings as sweep29.sh (2 threads, 64 MiB limit, Strata's cache the limit less 24 MiB, 4 KiB
# pages), every engine loading its stores fresh with this build (LOADS, default /tmp/s32/loads).
# Run from a directory holding strata, strata-bench-child and strata-bench-peers of one revision;
# docs/bench/sweep-goals.py *.json prints the tables.
L=${LOADS:-/tmp/s32/loads}
mkdir -p $L/d-sysbench $L/d-events
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --values 0.25x,0.5x,1x,1.5x,2x,4x,8x"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json --plot $name.png > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
P="--engine strata,bbolt,pebble --strata-r auto"
run s32-sysbench-point-uniform $P --dir $L/d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run s32-events-point-uniform $P --dir $L/d-events --dataset events --workload oltp_point_select --distribution uniform
touch S32DONE
