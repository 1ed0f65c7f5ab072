#!/bin/bash
# docs/BENCHMARKS.md, "Auto R against fixed R where the data fits raw, and at 8x" (sixteenth session):
# point reads, medians of three. Run from a directory holding strata and strata-bench-child of one
# revision and the loads d-events, d-sysbench (made by any earlier sweep with --keep).
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --engine strata --repeat 3 --strata-r auto,0.05,0.95 --workload oltp_point_select --distribution uniform"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run autor-sysbench --values 0.5x,8x --dir d-sysbench --dataset sysbench
run autor-events --values 0.5x --dir d-events --dataset events
touch AUTORDONE
