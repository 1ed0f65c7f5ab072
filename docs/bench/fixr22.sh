#!/bin/bash
# docs/BENCHMARKS.md, twenty-second session, "Why auto R kept the frames small for writes": oltp_write_only
# (sysbench rows, uniform, 2 threads) at 1x the 64 MiB limit, Strata (8fc6244) at auto R and fixed R 0.05, 0.5,
# 0.9, one load reused across the R values (each run after the first starts from data the one before changed).
# Run from a directory holding strata, strata-bench-child and strata-bench-peers.
./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 32MiB --warmup 5s --duration 10s \
   --strata-page-size 4KiB --values 1x --engine strata \
   --workload oltp_write_only --distribution uniform --dataset sysbench \
   --strata-r auto,0.05,0.5,0.9 --json r.json > r.txt 2> r.err
