#!/bin/bash
# docs/BENCHMARKS.md, thirty-first session: the sweep's (sweep31.sh) points below the best peer, and
# the points of the fixed-R comparison below 95%, again as medians of three runs in alternating
# order (--repeat 3), same settings and loads as sweep31.sh (LOADS: Strata's stores loaded by the
# build under test, load31.sh).
L=${LOADS:-/tmp/s31}
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --repeat 3"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run w31-sysbench-point-uniform --values 2x,4x,8x --engine strata,bbolt --strata-r auto --dir $L/d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run w31-events-point-uniform --values 4x,8x --engine strata,bbolt --strata-r auto --dir $L/d-events --dataset events --workload oltp_point_select --distribution uniform
run w31-sysbench-point-special --values 8x --engine strata,bbolt,pebble --strata-r auto --dir $L/d-sysbench --dataset sysbench --workload oltp_point_select --distribution special
run w31-sysbench-point-uniform-fixed --values 0.25x --engine strata --strata-r auto,0,0.75 --dir $L/d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run w31-sysbench-point-uniform-fixed8 --values 8x --engine strata --strata-r auto,0.5 --dir $L/d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
touch W31DONE
