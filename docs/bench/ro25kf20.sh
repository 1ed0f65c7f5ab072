#!/bin/bash
# Run from (a copy in) the directory holding the build directories; it writes into a subdirectory there.
# docs/BENCHMARKS.md, twentieth session, "Read-only at 0.25x: the kept load against a fresh one". Builds in
# bin/ (strata, strata-bench-child, strata-bench-peers from b6181ce); kept/ holds copies of the seventeenth
# session's sweep loads of that point (d-sysbench/strata-83886 and bbolt-83886).
cd "$(dirname "$0")"; mkdir -p kf
S="--param table-size --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s \
   --strata-page-size 4KiB --strata-r auto --values 0.25x --dataset sysbench --workload oltp_read_only --distribution uniform --engine strata,bbolt"
B="--strata-bin bin/strata-bench-child --peers-bin bin/strata-bench-peers"
kept() { bin/strata bench sweep $B $S --dir kept --keep --json kf/kept-$1.json > kf/kept-$1.txt 2>&1; }
fresh() { rm -rf fresh; bin/strata bench sweep $B $S --dir fresh --json kf/fresh-$1.json > kf/fresh-$1.txt 2>&1; }
for r in 1 2 3 4 5 6; do
  if [ $((r % 2)) = 1 ]; then kept $r; fresh $r; else fresh $r; kept $r; fi
done
touch kf/DONE
