#!/bin/bash
# docs/BENCHMARKS.md, "Auto R against fixed R" (seventeenth session): point reads, uniform keys, medians
# of three, at the sizes the sixteenth session did not measure (events 1x and 8x, sysbench 1x). Run from
# the directory of sweep17.sh (its loads are reused).
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --engine strata --repeat 3 --strata-r auto,0.05,0.5,0.95 --workload oltp_point_select --distribution uniform"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run autor-events --values 1x,8x --dir d-events --dataset events
run autor-sysbench --values 1x --dir d-sysbench --dataset sysbench
touch AUTORDONE
