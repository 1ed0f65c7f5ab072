#!/bin/bash
# docs/BENCHMARKS.md, thirty-third session: cached range scans (oltp_read_only) at 0.25x and 0.5x the
# memory, Strata beside bbolt, three runs each (the sweep's single runs had Strata at 0.83x, 0.92x).
# Same settings and stores as sweep33.sh. Run from a directory holding strata, strata-bench-child and
# strata-bench-bbolt of one revision.
L=${LOADS:-/tmp/s32/loads}
./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-dir . \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 16MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --engine strata,bbolt --strata-r auto --values 0.25x,0.5x --repeat 3 \
   --dir $L/d-sysbench --dataset sysbench --workload oltp_read_only --distribution uniform \
   --json ro33.json > ro33.txt 2> ro33.err
echo "rc=$?" >> ro33.txt
