#!/bin/bash
# docs/BENCHMARKS.md, "Why auto R misses the best fixed R on cached writes" (twenty-eighth session), the fifth sitting:
# base (b8f2551) vs final (9cd2c37) vs R 0.95 (base), 30 s measured, 3 rounds at 0.5x and 2 at 1x.
run() { b=$1; tag=$2; v=$3; shift 3
  case $v in 0.5x) n=167772;; 1x) n=335544;; 2x) n=671089;; esac
  rm -rf dw; mkdir dw; cp -a loads/strata-$n dw/; sync
  STRATA_BENCH_POOLTRACE=$PWD/tr-$tag STRATA_BENCH_POOLLOG=$PWD/log-$tag ./$b/strata bench sweep \
    --param table-size --strata-bin ./$b/strata-bench-child --mem-limit 64MiB --cache 32MiB \
    --strata-cache fill --strata-overhead 32MiB --warmup 10s --duration 30s --keep --strata-page-size 4KiB \
    --distribution uniform --engine strata --workload oltp_write_only --dataset sysbench --values $v \
    --dir dw --json w-$tag.json "$@" > w-$tag.txt 2>&1; }
rrun() { b=$1; tag=$2; ds=$3; v=$4; dist=$5
  STRATA_BENCH_POOLTRACE=$PWD/tr-$tag STRATA_BENCH_POOLLOG=$PWD/log-$tag ./$b/strata bench sweep \
    --param table-size --strata-bin ./$b/strata-bench-child --mem-limit 64MiB --cache 32MiB \
    --strata-cache fill --strata-overhead 32MiB --warmup 10s --duration 30s --keep --strata-page-size 4KiB \
    --distribution $dist --engine strata --workload oltp_point_select --dataset $ds --values $v \
    --dir dr-$ds-$v --json rd-$tag.json > rd-$tag.txt 2>&1; }
for round in 1 2 3; do for b in base final f95; do if [ $b = f95 ]; then run base f95-0.5x-$round 0.5x --strata-r 0.95; else run $b $b-0.5x-$round 0.5x; fi; done; done
for round in 1 2; do for b in base final; do run $b $b-1x-$round 1x; done; done
touch DONE-long
