#!/bin/bash
# docs/BENCHMARKS.md, "The controller on cached writes" (twenty-eighth session), writes28.sh:
# oltp_write_only (sysbench, uniform keys, 2 threads, commits not fsynced) under a 64 MiB limit,
# Strata's cache the limit less 32 MiB, 4 KiB pages, 10 s warm-up and 5 s measured, each run on a
# fresh copy of one load. base = b8f2551 (the session's start), new = 0d6d4bf (the third sitting's
# build; not kept); fixed R 0.95 on base beside them at 0.5x. The fourth sitting is cmp28.sh. The pool trace and the controller's log (STRATA_BENCH_POOLTRACE,
# STRATA_BENCH_POOLLOG) are written for every run.
# Loads: strata-N made by `strata bench sweep --keep` at 0.5x (167,772 rows), 1x, 2x.
run() { # run BUILD TAG VALUES [flags]
  b=$1; tag=$2; v=$3; shift 3
  case $v in 0.5x) n=167772;; 1x) n=335544;; 2x) n=671089;; esac
  rm -rf dw; mkdir dw; cp -a loads/strata-$n dw/; sync
  STRATA_BENCH_POOLTRACE=$PWD/tr-$tag STRATA_BENCH_POOLLOG=$PWD/log-$tag ./$b/strata bench sweep \
    --param table-size --strata-bin ./$b/strata-bench-child --mem-limit 64MiB --cache 32MiB \
    --strata-cache fill --strata-overhead 32MiB --warmup 10s --duration 5s --keep --strata-page-size 4KiB \
    --distribution uniform --engine strata --workload oltp_write_only --dataset sysbench --values $v \
    --dir dw --json w-$tag.json "$@" > w-$tag.txt 2>&1
}
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
