#!/bin/bash
# docs/BENCHMARKS.md, "Why auto R misses the best fixed R on cached writes" (twenty-eighth session), sittings 1-2:
# one traced oltp_write_only run: aw28.sh BUILD TAG VALUES [--strata-r R]; runs were interleaved by hand, builds as the
# section names them (base = b8f2551). Loads: the 0.5x load of reads27d.sh (strata-167772), 1x made by a
# `strata bench sweep --keep` run (loads/strata-335544), 2x from reads27d.sh (strata-671089).
b=$1; tag=$2; v=${3:-0.5x}; shift 3
case $v in 0.5x) n=167772;; 2x) n=671089;; 4x) n=1342177;; 8x) n=2684355;; 1x) n=335544;; esac
src=/tmp/s27/run4/d-new4-sysbench/strata-$n; [ -d loads/strata-$n ] && src=loads/strata-$n
rm -rf dw; mkdir dw; cp -a $src dw/strata-$n; sync
STRATA_BENCH_POOLTRACE=$PWD/tr-$tag STRATA_BENCH_POOLLOG=$PWD/log-$tag ./$b/strata bench sweep --param table-size --strata-bin ./$b/strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --distribution uniform --engine strata --strata-overhead 32MiB --workload ${WL:-oltp_write_only} --dataset sysbench --values $v \
   --dir dw --json aw-$tag.json "$@" > aw-$tag.txt 2>&1
echo rc=$?
