#!/bin/bash
# docs/BENCHMARKS.md, "Issue 9's sweep on the new read path" (twenty-sixth session): sweep25.sh's sweep
# (point reads, uniform keys, both data sets, 2 threads, the peers beside Strata) on 9dfc6a2 (each AIO
# reader woken by the poller), on the same Intel host and sweep25.sh's loads (d-sysbench, d-events).
# Run from a directory holding strata, strata-bench-child and strata-bench-peers of one revision;
# the loads are made on the first run (--keep). docs/bench/sweep-goals.py *.json prints the tables.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --values 0.25x,0.5x,1x,1.5x,2x,4x,8x --engine strata,bbolt,pebble"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json --plot $name.png > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run s26-sysbench-point-uniform --dir d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run s26-events-point-uniform --dir d-events --dataset events --workload oltp_point_select --distribution uniform
touch S26DONE
