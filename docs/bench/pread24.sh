#!/bin/bash
# docs/BENCHMARKS.md, "Direct reads: AIO against pread(2) on the reading goroutine" (twenty-fourth session).
# An experiment, not the repository's code: build strata and strata-bench-child from 1f51c23 with
# docs/bench/pread24.diff applied (git apply), which adds STRATA_EXP_MODE: "aio" (the repository's
# behaviour), "pread" (every direct read a blocking pread(2)), anything else or unset (hybrid: pread while
# fewer than GOMAXPROCS-1 reads block, AIO beyond). Run from the build directory; D holds sweep17.sh's loads
# (--keep), W a copy of D's strata-671089 (the write runs change it).
D=${D:-d-sysbench}; W=${W:-dw}
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --dataset sysbench --distribution uniform --engine strata"
for round in 1 2 3; do
 for t in 2 4; do
  for v in 8x 4x; do
   for m in aio hybrid pread; do
    STRATA_EXP_MODE=$m $S --threads $t --values $v --dir $D --workload oltp_point_select --json m-r-$t-$v-$m-$round.json > m-r-$t-$v-$m-$round.txt 2>&1
   done
  done
 done
 for m in aio hybrid pread; do
  STRATA_EXP_MODE=$m $S --threads 2 --values 2x --dir $W --workload oltp_write_only --strata-overhead 32MiB --json m-w-2-2x-$m-$round.json > m-w-2-2x-$m-$round.txt 2>&1
 done
done
# The device alone (fio, O_DIRECT, queue depth 1) on the 8x load's segments:
# fio --name=r --filename=<segments joined by ':'> --readonly --direct=1 --rw=randread --bs=4k --ioengine=psync (and --bs=2k, 8k) --runtime=6 --time_based
