#!/bin/bash
# docs/BENCHMARKS.md, twenty-first session, "Writes across data sizes": oltp_write_only (uniform keys,
# 2 threads) from 0.25x to 8x the 64 MiB memory limit, sysbench rows and JSON events, Strata (cache
# filling the limit less its overhead, auto R, 4 KiB pages) beside bbolt and Pebble, every point a fresh
# load (no --keep: a write run changes the data). Run from a directory on a real disk holding strata,
# strata-bench-child and strata-bench-peers built from one revision. docs/bench/sweep-goals.py *.json
# prints the tables. The first sitting (08:48, acfc746) ran with OVERHEAD=24MiB (the read sweeps' value, not
# the 32 MiB `strata bench sweep` gives a writing workload by default): the Go heap was too small at 4-8x.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead ${OVERHEAD:-32MiB} --warmup 5s --duration 10s \
   --strata-page-size 4KiB --strata-r auto --values 0.25x,0.5x,1x,2x,4x,8x --engine strata,bbolt,pebble \
   --workload oltp_write_only --distribution uniform"
P=${PREFIX:-}
run() { name=$P$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json --plot $name.png > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run sysbench-write-uniform --dataset sysbench
run events-write-uniform --dataset events
touch SWEEPDONE
