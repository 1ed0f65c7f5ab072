#!/bin/bash
# docs/BENCHMARKS.md, "Auto R against fixed R on this host" (twenty-fifth session): autor24.sh's first
# sitting (Strata alone, point reads, every size of the sweep, auto beside fixed R 0-0.95, single runs),
# for uniform keys on both data sets, on the Intel host with the final code. Run from a directory holding
# strata and strata-bench-child of one revision and sweep25.sh's loads (d-sysbench, d-events).
# docs/bench/autor-goals.py autor25-*.json prints the tables.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --engine strata --strata-r auto,0,0.25,0.5,0.75,0.95 --workload oltp_point_select \
   --values 0.25x,0.5x,1x,1.5x,2x,4x,8x"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; "$@" > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run autor25-sysbench-uniform $S --dir d-sysbench --dataset sysbench --distribution uniform --json autor25-sysbench-uniform.json
run autor25-events-uniform $S --dir d-events --dataset events --distribution uniform --json autor25-events-uniform.json
touch AUTOR25DONE
