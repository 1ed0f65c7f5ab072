#!/bin/bash
# docs/BENCHMARKS.md, thirty-fourth session: issue 10's cached goals and durable-commit grouping on the
# session's final code, peers each in its own binary (writes18.sh's first three parts; the I/O-bound part
# ran in the thirty-third session, writes33.sh). Run from a directory on a real disk holding strata,
# strata-bench-child, strata-bench-bbolt and strata-bench-pebble built from one revision.
#  - cached (250,000 rows, cache 128 MiB, limit 224 MiB, fresh loads): oltp_write_only and oltp_insert
#    against bbolt and Pebble, two rounds in alternating engine order, 20 s each (the p99.9 commit
#    latency of these runs, which checkpoint, is the stall goal's figure); oltp_read_only against
#    bbolt, four rounds alternating, 8 s each;
#  - durable commits (--sync) with 8 threads: commits per WAL fsync (db.wal syncs against txns).
set -u
C="./strata bench --strata-bin ./strata-bench-child --peers-dir ."
r() { name=$1; shift; $C "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB"
for round in 1 2; do
  order="strata bbolt pebble"; [ $round = 2 ] && order="pebble bbolt strata"
  for e in $order; do
    r cached-$e-$round --engines $e $CACHED --warmup 3s --duration 20s --workload oltp_write_only,oltp_insert
  done
done
for round in 1 2 3 4; do
  order="strata bbolt"; [ $((round % 2)) = 0 ] && order="bbolt strata"
  for e in $order; do r ro-$round-$e --engines $e $CACHED --warmup 3s --duration 8s --workload oltp_read_only; done
done
r sync8 --engines strata,bbolt,pebble $CACHED --warmup 2s --duration 10s --workload oltp_write_only --sync --threads 8
touch W34DONE
