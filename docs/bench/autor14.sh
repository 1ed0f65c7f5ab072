#!/bin/bash
# docs/BENCHMARKS.md, "Auto R against fixed R on the final code" (fourteenth session): three points, medians of three.
# Run from a directory holding strata and strata-bench-child of one revision and the loads d-events, d-sysbench.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --engine strata --repeat 3"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run autor-events2 --strata-r auto,0.75,0.95 --values 2x --dir d-events --dataset events --workload oltp_point_select --distribution uniform
run autor-sysbench2 --strata-r auto,0.75,0.95 --values 2x --dir d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run autor-ro4 --strata-r auto,0.5,0.95 --values 4x --dir d-sysbench --dataset sysbench --workload oltp_read_only --distribution uniform
touch AUTORDONE
