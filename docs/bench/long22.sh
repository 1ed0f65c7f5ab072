#!/bin/bash
# docs/BENCHMARKS.md, twenty-second session: fin1 (4620216) against fin2 (8490976, the frames arm allowed for
# writes beyond the frames) in 60 s runs, oltp_write_only sysbench uniform at 0.5x and 1x the 64 MiB limit, cache
# 32 MiB, auto R, a fresh load per run. Run from a directory holding fin1/ and fin2/.
for s in 0.5x 1x; do for b in fin1 fin2; do
  $b/strata bench sweep --param table-size --strata-bin $b/strata-bench-child --peers-bin $b/strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 32MiB --warmup 5s --duration 60s \
   --strata-page-size 4KiB --strata-r auto --values $s --engine strata \
   --workload oltp_write_only --distribution uniform --dataset sysbench --json $b-$s.json > $b-$s.txt 2> $b-$s.err
  echo "$(date -u +%T) $b-$s $(grep -E '^ +[0-9.]+x' $b-$s.txt | head -1 | cut -c1-120)" >> progress
done; done
touch DONE
