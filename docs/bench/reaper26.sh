#!/bin/bash
# docs/BENCHMARKS.md, "Each direct read woken by the poller" (twenty-sixth session): a reaper goroutine
# blocked in io_getevents(2) instead of the poller, measured and not kept. Build strata,
# strata-bench-child and strata-bench-peers from 1376702 with reaper26.diff applied; STRATA_AIO_MODE=thread
# selects the blocked reaper (locked to its thread; STRATA_AIO_MODE2=nolock without the lock, =gosched
# without it and yielding after each wake-up), anything else the repository's reaper (poll). Run from the
# build directory with sweep25.sh's loads in d-sysbench and d-events.
# The idle-process latencies (21:16 UTC) came from BenchmarkDirectRead (copy 9dfc6a2's
# internal/vfs/direct_read_bench_test.go into the tree with the diff applied) run three times in turn with
# STRATA_AIO_MODE=thread, unset, and the pread sub-benchmark: see direct26.sh for the command. The diff also
# counts SubmitNS and ResumeNS (the time in io_submit, and from the reaper's wake-up to the reader's), which
# a temporary line in the benchmark reported; it is not in the repository.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --distribution uniform --engine strata"
point() { # mode mode2 dataset size round
  STRATA_AIO_MODE=$1 STRATA_AIO_MODE2=$2 $S --strata-overhead 24MiB --workload oltp_point_select --dataset $3 --values $4 \
    --dir d-$3 --json f-$3-$4-$1$2-$5.json > f-$3-$4-$1$2-$5.txt 2>&1
}
writes() { # mode mode2 round
  rm -rf dw; mkdir dw; cp -a d-sysbench/strata-671089 dw/; sync
  STRATA_AIO_MODE=$1 STRATA_AIO_MODE2=$2 $S --strata-overhead 32MiB --workload oltp_write_only --dataset sysbench --values 2x \
    --dir dw --json w-$1$2-$3.json > w-$1$2-$3.txt 2>&1
}
# First sitting (21:12-21:19 UTC): poll against thread, three rounds.
for round in 1 2 3; do
  case $round in 1|3) order="poll thread";; 2) order="thread poll";; esac
  for p in sysbench:4x sysbench:8x events:8x; do
    for m in $order; do point $m "" ${p%%:*} ${p##*:} $round; done
  done
  for m in $order; do writes $m "" $round; done
done
# Second sitting (21:19-21:24 UTC): poll against thread without the lock, and yielding, two rounds.
for round in 1 2; do
  case $round in 1) order="poll: thread:gosched thread:nolock";; 2) order="thread:nolock poll: thread:gosched";; esac
  for p in sysbench:4x events:8x; do
    for m in $order; do point ${m%%:*} "${m##*:}" ${p%%:*} ${p##*:} $round; done
  done
  for m in $order; do writes ${m%%:*} "${m##*:}" $round; done
done
