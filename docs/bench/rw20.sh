#!/bin/bash
# docs/BENCHMARKS.md, twentieth session, "The worst commits": cached oltp_read_write (250,000 rows, cache
# 128 MiB, limit 224 MiB, 10 s), bin (b6181ce: writeMu a sync.Mutex) against final (b839c44: handoff.Mutex),
# three rounds, alternating order. Run from the directory holding the two build directories.
cd "$(dirname "$0")"; mkdir -p rw
for r in 1 2 3; do
  for b in $( [ $r = 2 ] && echo "final bin" || echo "bin final" ); do
    $b/strata bench --strata-bin $b/strata-bench-child --peers-bin $b/strata-bench-peers --engines strata --dataset sysbench \
      --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 10s --workload oltp_read_write --json rw/$b-$r.json > rw/$b-$r.txt 2>&1
  done
done
