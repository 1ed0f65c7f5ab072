#!/bin/bash
# docs/BENCHMARKS.md, thirty-first session, "Stores loaded by this code". Run from a directory holding
# strata, strata-bench-child and strata-bench-peers of one revision, after load31.sh (LOADS=/tmp/s31).
# Strata on the twenty-fifth session's stores (no table dictionary: old) against the same rows loaded by this code (new), bbolt beside, point reads, uniform keys, 2 threads.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto --workload oltp_point_select --distribution uniform"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for v in $order; do
    if [ $v = old ]; then L=/tmp/s25/sw; E=strata; else L=/tmp/s31; E=strata,bbolt; fi
    run r$r-$v-sysbench --engine $E --dir $L/d-sysbench --dataset sysbench --values 2x,4x,8x
    run r$r-$v-events --engine strata --dir $L/d-events --dataset events --values 4x,8x
  done
done
touch RELOADDONE
