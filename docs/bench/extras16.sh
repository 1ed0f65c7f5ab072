#!/bin/bash
# docs/BENCHMARKS.md, "Deferred commits and asynchronous reads" (sixteenth session): the other regimes,
# the build before and after side by side, two rounds alternating: cached writes (250,000 rows, 128 MiB
# cache, 224 MiB limit, a fresh load per run), and point reads and read-write OLTP at 8x (fresh copies).
set -u
OLD=${OLD:-./old}; NEW=${NEW:-./new}
IO8="--dataset sysbench --table-size 2684355 --mem-limit 64MiB --warmup 5s --duration 20s --distribution uniform --keep --dir io --engines strata --cache 24MiB"
CACHED="--dataset sysbench --table-size 250000 --mem-limit 224MiB --cache 128MiB --warmup 5s --duration 15s --distribution uniform --dir cached --engines strata"
fresh() { rm -rf io; mkdir io; cp -a orig/$1 io/; sync; }
r() { name=$1; bin=$2; shift 2; $bin/strata bench --strata-bin $bin/strata-bench-child --peers-bin $bin/strata-bench-peers "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
for round in 1 2; do
  for b in new old; do
    bin=$NEW; [ $b = old ] && bin=$OLD
    for wl in oltp_write_only oltp_insert; do rm -rf cached; r cached-$wl-$b-$round $bin $CACHED --workload $wl; done
    for wl in oltp_point_select oltp_read_write; do fresh strata-2684355; r io-$wl-$b-$round $bin $IO8 --workload $wl; done
  done
done
touch EXTRASDONE
