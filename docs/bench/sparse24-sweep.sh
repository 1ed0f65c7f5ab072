#!/bin/bash
# docs/BENCHMARKS.md, "Frames take the memory sparse images leave": auto R across the sweep sizes on the
# new build. Run from sparse24.sh's directory.
for ds in sysbench events; do
./new/strata bench sweep --param table-size --strata-bin ./new/strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --engine strata --workload oltp_point_select --distribution uniform \
   --values 0.25x,0.5x,1x,1.5x,2x,4x,8x --dir d-$ds --dataset $ds --json fin-$ds.json > fin-$ds.txt 2>&1
done
touch FINDONE
