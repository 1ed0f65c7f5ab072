#!/bin/bash
# docs/BENCHMARKS.md, thirty-third session: what Strata's process needs beyond its cache under the
# 64 MiB limit, reading: Strata alone at the points where its cache decides, with
# --strata-overhead 24, 18 and 14 MiB (0.5, 1, 2x), then 16 MiB at the I/O-bound points and for range
# scans. On sweep32.sh's stores (LOADS). Run from a directory holding strata and strata-bench-child.
L=${LOADS:-/tmp/s32/loads}
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --mem-limit 64MiB --cache 32MiB \
   --strata-cache fill --warmup 10s --duration 5s --keep --strata-page-size 4KiB --engine strata --strata-r auto \
   --distribution uniform"
for ov in 24MiB 18MiB 14MiB; do
  for ds in events sysbench; do
    $S --strata-overhead $ov --values 0.5x,1x,2x --dir $L/d-$ds --dataset $ds --workload oltp_point_select \
       --json ov-$ds-$ov.json > ov-$ds-$ov.txt 2> ov-$ds-$ov.err
  done
done
for ds in events sysbench; do
  $S --strata-overhead 16MiB --values 0.5x,4x,8x --dir $L/d-$ds --dataset $ds --workload oltp_point_select \
     --json ov2-$ds.json > ov2-$ds.txt 2> ov2-$ds.err
done
$S --strata-overhead 16MiB --values 1x,8x --dir $L/d-sysbench --dataset sysbench --workload oltp_read_only \
   --json ov2-ro.json > ov2-ro.txt 2> ov2-ro.err
