#!/bin/bash
# docs/BENCHMARKS.md, "Deferred commits and asynchronous reads" (sixteenth session): I/O-bound updates,
# the build before and after side by side, bbolt beside, 2,684,355 sysbench rows (8x the 64 MiB limit),
# a fresh copy of each load before every run (orig/, as in writes15.sh), rounds alternating.
# OLD and NEW are directories holding strata, strata-bench-child and strata-bench-peers of each revision.
set -u
OLD=${OLD:-./old}; NEW=${NEW:-./new}
IO8="--dataset sysbench --table-size 2684355 --mem-limit 64MiB --warmup 5s --duration 20s --distribution uniform --keep --dir io"
fresh() { rm -rf io; mkdir io; cp -a orig/$1 io/; sync; }
r() { name=$1; bin=$2; shift 2; $bin/strata bench --strata-bin $bin/strata-bench-child --peers-bin $bin/strata-bench-peers "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
for round in 1 2 3; do
  for wl in oltp_write_only ycsb_a; do
    fresh strata-2684355; r $wl-new-$round $NEW $IO8 --workload $wl --engines strata --cache 24MiB
    fresh strata-2684355; r $wl-old-$round $OLD $IO8 --workload $wl --engines strata --cache 24MiB
    fresh bbolt-2684355; r $wl-bbolt-$round $NEW $IO8 --workload $wl --engines bbolt --cache 32MiB
  done
done
touch WRITESDONE
