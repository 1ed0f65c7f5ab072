#!/bin/bash
# Issue 9's data-size sweep, JSON events only, on the fifteenth session's code (no frames trial where frames alone would miss far more),
# at the 4 KiB default, auto R only, the peers beside Strata in the same run.
# Run from a directory holding strata, strata-bench-child and strata-bench-peers built from the
# same revision; d-events and d-sysbench may hold the loads of docs/bench/sweep12.sh, reused.
# docs/bench/sweep-goals.py *.json prints the tables.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --values 0.25x,0.5x,1x,1.5x,2x,4x,8x --engine strata,bbolt,pebble"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json --plot $name.png > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }

run events-point-uniform --dir d-events --dataset events --workload oltp_point_select --distribution uniform
touch EVSWEEPDONE
