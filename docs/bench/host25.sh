#!/bin/bash
# docs/BENCHMARKS.md, "Where this host differs" (twenty-fifth session): the device alone, and where
# Strata's CPU goes at sysbench 4x. Run from sweep25.sh's directory after it (the loads in d-sysbench).
set -u
f=d-sysbench/strata-2684355/db/00000001.seg   # the 8x load's segment file
for nj in 1 2; do
  fio --name=r --filename=$f --readonly --rw=randread --bs=4k --direct=1 --ioengine=psync \
      --numjobs=$nj --runtime=8 --time_based --group_reporting
done
# A 10 s CPU profile of Strata's measured phase at 4x (written to p4.prof.strata):
STRATA_BENCH_CPUPROFILE=$PWD/p4.prof ./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
  --peers-bin ./strata-bench-peers --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB \
  --warmup 10s --duration 10s --keep --strata-page-size 4KiB --strata-r auto --values 4x --engine strata \
  --dir d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform --json p4.json
go tool pprof -top -nodecount=35 ./strata-bench-child p4.prof.strata
