#!/bin/bash
# docs/BENCHMARKS.md, thirty-sixth session: the points where Strata fell below the best peer (bbolt)
# in sweep33.sh and worst34.sh, on the session's final code (demotions coded as frames of literals, polled reads),
# three runs of each engine in alternating order
# (sweep --repeat 3: medians), Strata beside bbolt only. Same settings and stores as sweep33.sh
# (LOADS, default /tmp/s32/loads). Run from a directory holding strata, strata-bench-child and
# strata-bench-bbolt of one revision.
L=${LOADS:-/tmp/s32/loads}
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-dir . \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 16MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --engine strata,bbolt --strata-r auto --repeat 3"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json --plot $name.png > $name.txt 2> $name.err; rc=$?; echo "$(date -u +%H:%M:%S) end $name rc=$rc" >> progress; }
run s36-sysbench-special --values 1.5x,2x,4x --dir $L/d-sysbench --dataset sysbench --workload oltp_point_select --distribution special
run s36-sysbench-uniform --values 8x --dir $L/d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run s36-events-uniform --values 8x --dir $L/d-events --dataset events --workload oltp_point_select --distribution uniform
run s36-sysbench-ro --values 0.25x,0.5x --dir $L/d-sysbench --dataset sysbench --workload oltp_read_only --distribution uniform
touch W36WORSTDONE
