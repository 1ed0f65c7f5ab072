#!/bin/bash
# docs/BENCHMARKS.md, thirty-third session: auto beside fixed R at sysbench special 2x and 4x, the
# points where Strata fell below bbolt in sweep33.sh. Same settings and stores as sweep33.sh.
L=${LOADS:-/tmp/s32/loads}
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-dir . \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 16MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB"
name=s33-sysbench-special-fixed-r
echo "$(date -u +%H:%M:%S) start $name" >> progress
$S --engine strata --strata-r auto,0,0.25,0.5,0.75,0.95 --values 2x,4x --dir $L/d-sysbench --dataset sysbench \
   --workload oltp_point_select --distribution special --json $name.json > $name.txt 2> $name.err
rc=$?
echo "$(date -u +%H:%M:%S) end $name rc=$rc" >> progress
