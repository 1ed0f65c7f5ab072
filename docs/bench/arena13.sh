#!/bin/bash
# docs/BENCHMARKS.md, "Images in pieces of 64-byte granules": images in pieces (new2: strata and
# strata-bench-child built at 2474235) against 512-byte chunks (base: built at eaeb639), 4 KiB pages,
# point reads, auto R, the sizes where the compressed tier holds data; rounds in the order new2, base,
# base, new2; the loads of docs/bench/sweep12.sh (in /tmp/meas/s11/sw here), reused.
S="bench sweep --param table-size --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB \
   --warmup 10s --duration 5s --keep --strata-page-size 4KiB --strata-r auto --engine strata"
for b in new2 base base new2; do
  n=$((n+1))
  for ds in events sysbench; do
    v=1x,1.5x,2x,4x; [ $ds = sysbench ] && v=1x,1.5x,2x
    echo "$(date -u +%T) start r$n-$b-$ds" >> progress
    ../$b/strata $S --strata-bin ../$b/strata-bench-child --values $v --dir /tmp/meas/s11/sw/d-$ds --dataset $ds \
      --workload oltp_point_select --distribution uniform --json r$n-$b-$ds.json > r$n-$b-$ds.txt 2> r$n-$b-$ds.err
  done
done
echo "$(date -u +%T) done" >> progress; touch DONE
