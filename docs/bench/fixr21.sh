#!/bin/bash
# docs/BENCHMARKS.md, twenty-first session, "Writes across data sizes": auto R against fixed R for
# oltp_write_only at 1x and 4x (sysbench rows, uniform, 64 MiB limit), one load per size reused. Run as wsweep21.sh.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 5s --duration 10s \
   --strata-page-size 4KiB --strata-r auto,0.05,0.5 --values 1x,4x --engine strata \
   --workload oltp_write_only --distribution uniform --dataset sysbench"
$S --json fixr.json --plot fixr.png > fixr.txt 2> fixr.err
touch FIXRDONE
