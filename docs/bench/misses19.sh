#!/bin/bash
# docs/BENCHMARKS.md, issue 9 on the nineteenth session's code: the points where Strata fell below
# the best peer, or below the 1.5x goal where the data fits compressed, in that session's single-run
# sweep (docs/bench/sweep17.sh, run unchanged on this code, whose loads are reused), as medians of three, the peers beside. Run
# from a directory holding the sweep's loads d-sysbench and d-events (or links to them).
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --engine strata,bbolt,pebble --repeat 3"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run m-sysbench-point-special --values 4x --dir d-sysbench --dataset sysbench --workload oltp_point_select --distribution special
run m-sysbench-point-uniform --values 1.5x --dir d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run m-events-point-uniform --values 8x --dir d-events --dataset events --workload oltp_point_select --distribution uniform
# then (after writes18.sh ran) the points that the sweep put within noise of a goal
run m-sysbench-ro-uniform --values 0.25x --dir d-sysbench --dataset sysbench --workload oltp_read_only --distribution uniform
run m-events-point-special --values 1x,1.5x --dir d-events --dataset events --workload oltp_point_select --distribution special
touch MISSESDONE
