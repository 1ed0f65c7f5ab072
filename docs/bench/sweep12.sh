#!/bin/bash
# Issue 9's data-size sweep on the twelfth session's code (the bench's GOMEMLIMIT follows the pool's metadata), auto R only.
# Run from a directory holding strata, strata-bench-child and strata-bench-peers built from the
# same revision; d-events and d-sysbench may hold the loads of docs/bench/sweep11.sh (the peers'
# of sweep9.sh), reused.
# docs/bench/sweep-goals.py *.json prints the tables.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB,16KiB --strata-r auto --values 0.25x,0.5x,1x,1.5x,2x,4x,8x --engine strata,bbolt,pebble"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json --plot $name.png > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run sysbench-point-uniform --dir d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run sysbench-point-special --dir d-sysbench --dataset sysbench --workload oltp_point_select --distribution special
run sysbench-ro-uniform --dir d-sysbench --dataset sysbench --workload oltp_read_only --distribution uniform
run events-point-uniform --dir d-events --dataset events --workload oltp_point_select --distribution uniform
# Reruns of the points a test run on the same host disturbed (sysbench point reads 4x and 8x) and of
# oltp_read_only at 4x (bbolt 37 txn/s); docs/BENCHMARKS.md uses these in place of the first runs.
run r-sysbench-point-uniform --values 4x,8x --dir d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run r-sysbench-ro-uniform --values 4x --dir d-sysbench --dataset sysbench --workload oltp_read_only --distribution uniform
