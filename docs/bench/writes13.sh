#!/bin/bash
# docs/BENCHMARKS.md, "Issue 10's goals at the 4 KiB default": durable commits per fsync with 8
# threads, and commit latency (p99.9) over cached write runs that checkpoint, Strata at its 4 KiB
# default beside bbolt and Pebble, fresh loads. Run from a directory on a real disk holding strata,
# strata-bench-child and strata-bench-peers built from one revision.
set -u
C="./strata bench --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers"
r() { name=$1; shift; $C "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB"
r cached-writes --engines strata,bbolt,pebble $CACHED --warmup 3s --duration 20s --workload oltp_write_only,oltp_insert
r sync8 --engines strata,bbolt,pebble $CACHED --warmup 2s --duration 10s --workload oltp_write_only --sync --threads 8
touch DONE
