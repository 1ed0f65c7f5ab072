#!/bin/bash
# docs/BENCHMARKS.md, "Which slow commits are a checkpoint's" (twenty-third session): issue 10's
# cached write runs (250,000 rows, cache 128 MiB, limit 224 MiB, 2 threads, as writes18.sh), Strata
# and bbolt (no background work: the host's own tail), four rounds in alternating order; each Strata
# run reports the transactions that overlapped a checkpoint apart from the others (ckpt_* and
# rest_* in the JSON). docs/bench/jitter (built as ./jitter) measures the bare host before and
# after. Run from a directory on a real disk holding strata, strata-bench-child,
# strata-bench-peers and jitter built from one revision.
set -u
C="./strata bench --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers"
r() { name=$1; shift; $C "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB"
./jitter -d 20s > jitter-before.txt
for round in ${ROUNDS:-1 2 3 4}; do
  order="strata bbolt"; [ $((round % 2)) = 0 ] && order="bbolt strata"
  for e in $order; do
    r cached-$e-$round --engines $e $CACHED --warmup 3s --duration 20s --workload oltp_write_only,oltp_insert
  done
done
./jitter -d 20s > jitter-after.txt
touch DONE
