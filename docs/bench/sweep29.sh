#!/bin/bash
# docs/BENCHMARKS.md, "Far-view jumps measured as trials, the copy arm tried near the floor" (twenty-ninth session), its sweep: the sweep (2 threads,
# 64 MiB limit, Strata's cache the limit less 24 MiB, 4 KiB pages, the peers beside Strata) on the
# session's final code, on the twenty-fifth session's loads (LOADS: d-sysbench, d-events): point reads
# with uniform keys on both data sets and special keys on sysbench rows, read-only OLTP (range scans)
# on sysbench rows, and Strata alone at fixed R (0, 0.25, 0.5, 0.75, 0.95) for sysbench point reads.
# Run from a directory holding strata, strata-bench-child and strata-bench-peers of one revision;
# docs/bench/sweep-goals.py *.json prints the tables. TAG (default s29) prefixes the outputs' names
# (sweep30.sh runs this script with TAG=s30).
L=${LOADS:-/tmp/s25/sw}
T=${TAG:-s29}
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --values 0.25x,0.5x,1x,1.5x,2x,4x,8x"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json --plot $name.png > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
P="--engine strata,bbolt,pebble --strata-r auto"
run $T-sysbench-point-uniform $P --dir $L/d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run $T-events-point-uniform $P --dir $L/d-events --dataset events --workload oltp_point_select --distribution uniform
run $T-sysbench-point-special $P --dir $L/d-sysbench --dataset sysbench --workload oltp_point_select --distribution special
run $T-sysbench-ro-uniform $P --dir $L/d-sysbench --dataset sysbench --workload oltp_read_only --distribution uniform
run $T-sysbench-point-uniform-fixed --engine strata --strata-r 0,0.25,0.5,0.75,0.95 --dir $L/d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
touch ${T^^}DONE
