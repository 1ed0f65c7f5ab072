#!/bin/bash
# Issue 9's data-size sweep on the nineteenth session's code (leaf peeks for point reads; as the seventeenth: asynchronous direct reads, deferred
# commits, write-back that yields), at the 4 KiB default, auto R, the peers beside Strata in the same
# run: sysbench rows (point reads uniform and special, oltp_read_only uniform) and JSON events (point
# reads uniform and special). Run from a directory holding strata, strata-bench-child and
# strata-bench-peers built from the same revision. docs/bench/sweep-goals.py *.json prints the tables.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --values 0.25x,0.5x,1x,1.5x,2x,4x,8x --engine strata,bbolt,pebble"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json --plot $name.png > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run sysbench-point-uniform --dir d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run events-point-uniform --dir d-events --dataset events --workload oltp_point_select --distribution uniform
run sysbench-point-special --dir d-sysbench --dataset sysbench --workload oltp_point_select --distribution special
run sysbench-ro-uniform --dir d-sysbench --dataset sysbench --workload oltp_read_only --distribution uniform
run events-point-special --dir d-events --dataset events --workload oltp_point_select --distribution special
touch SWEEPDONE
