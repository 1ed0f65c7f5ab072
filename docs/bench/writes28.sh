#!/bin/bash
# docs/BENCHMARKS.md, "Why auto R misses the best fixed R on cached writes" (twenty-eighth session), writes28.sh:
# oltp_write_only (sysbench, uniform keys, 2 threads, commits not fsynced) under a 64 MiB limit,
# Strata's cache the limit less 32 MiB, 4 KiB pages, 10 s warm-up and 5 s measured, each run on a
# fresh copy of one load. base = b8f2551 (the session's start), new = 0d6d4bf (the third sitting's
# build; not kept); fixed R 0.95 on base beside them at 0.5x. The fourth sitting is cmp28.sh. The pool trace and the controller's log (STRATA_BENCH_POOLTRACE,
# STRATA_BENCH_POOLLOG) are written for every run.
# Loads: strata-N made by `strata bench sweep --keep` at 0.5x (167,772 rows), 1x, 2x.
. "$(dirname "$0")/runs28.sh"
for round in 1 2 3 4 5 6; do
  run base base-0.5x-$round 0.5x
  run new new-0.5x-$round 0.5x
  run base f95-0.5x-$round 0.5x --strata-r 0.95
done
for v in 1x 2x; do
  for round in 1 2 3; do
    run base base-$v-$round $v
    run new new-$v-$round $v
  done
done
touch DONE-writes
