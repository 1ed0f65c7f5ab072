#!/bin/bash
# docs/BENCHMARKS.md, "Hot inner pages left to checkpoints" (fifteenth session): I/O-bound updates,
# Strata beside bbolt, 2,684,355 sysbench rows (8x the 64 MiB limit), a fresh copy of each engine's
# load before every run (orig/strata-2684355 and orig/bbolt-2684355, made by any earlier run with
# --keep), rounds alternating. Run from a directory holding strata, strata-bench-child and
# strata-bench-peers of one revision.
set -u
IO8="--dataset sysbench --table-size 2684355 --mem-limit 64MiB --warmup 5s --duration 20s --distribution uniform --keep --dir io"
fresh() { rm -rf io; mkdir io; cp -a orig/$1 io/; sync; }
r() { name=$1; shift; ./strata bench --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
for round in 1 2 3; do
  for wl in oltp_write_only ycsb_a; do
    fresh bbolt-2684355; r $wl-bbolt-$round $IO8 --workload $wl --engines bbolt --cache 32MiB
    fresh strata-2684355; r $wl-strata-$round $IO8 --workload $wl --engines strata --cache 24MiB
  done
done
touch WRITESDONE
