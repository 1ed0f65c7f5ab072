#!/bin/bash
# docs/BENCHMARKS.md, "The sweep with 4 threads" (twenty-fourth session): issue 9's data-size sweep for
# point reads, uniform keys, both data sets, with 4 threads (sweep17.sh ran 2), the peers beside
# Strata. Run from a directory holding strata, strata-bench-child and strata-bench-peers of one revision
# and sweep17.sh's loads (--keep). docs/bench/sweep-goals.py *.json prints the tables.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --values 0.25x,0.5x,1x,1.5x,2x,4x,8x --engine strata,bbolt,pebble --threads 4"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json --plot $name.png > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run t4-sysbench-point-uniform --dir d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run t4-events-point-uniform --dir d-events --dataset events --workload oltp_point_select --distribution uniform
touch T4DONE
