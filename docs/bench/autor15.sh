#!/bin/bash
# docs/BENCHMARKS.md, "Auto R against fixed R on the final code" (fifteenth session): five points where the data fits
# only compressed or nearly, medians of three. Run from a directory holding strata and
# strata-bench-child of one revision and the loads d-events, d-sysbench.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --engine strata --repeat 3 --strata-r auto,0.75,0.95 --workload oltp_point_select --distribution uniform"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run autor-events --values 1.5x,2x,4x --dir d-events --dataset events
run autor-sysbench --values 1.5x,2x --dir d-sysbench --dataset sysbench
# Special keys at 1.5x, with frames alone beside (11:13 UTC):
./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --engine strata --repeat 3 --strata-r auto,0.05,0.5,0.95 --workload oltp_point_select --distribution special \
   --values 1.5x --dir d-sysbench --dataset sysbench --json autor-special.json > autor-special.txt 2> autor-special.err
touch AUTORDONE
# The same point again, auto and R 0.05 alternating, three rounds (11:36 UTC), with pool traces:
# for round in 1 2 3; do
#   STRATA_BENCH_POOLTRACE=$PWD/sp-auto-$round.trace ./strata bench sweep ... --strata-r auto --values 1.5x --distribution special
#   ./strata bench sweep ... --strata-r 0.05 --values 1.5x --distribution special
# done
