#!/bin/bash
# Run from (a copy in) the directory holding the build directories; it writes into a subdirectory there.
# docs/BENCHMARKS.md, twentieth session, "The worst commits". Build directories, each with strata,
# strata-bench-child and strata-bench-peers: bin = b6181ce (writeMu a sync.Mutex); yield = 9789881 with
# write-back and frees yielding by a short sleep when goroutines are runnable (not kept); hg = 9789881 with
# writeMu a channel of one (always hands over; not kept); hy = both (not kept).
cd "$(dirname "$0")"; mkdir -p wy2
C="--engines strata --dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 15s --workload oltp_write_only"
run() { $1/strata bench --strata-bin $1/strata-bench-child --peers-bin $1/strata-bench-peers $C --json wy2/$1-$2.json > wy2/$1-$2.txt 2>&1; }
for r in 1 2 3 4; do
  case $r in 1) o="bin yield hg hy";; 2) o="hy hg yield bin";; 3) o="yield hy bin hg";; 4) o="hg bin hy yield";; esac
  for b in $o; do run $b $r; done
done
touch wy2/DONE
