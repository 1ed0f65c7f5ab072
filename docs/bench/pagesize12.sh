#!/bin/bash
# docs/BENCHMARKS.md, "Page size: 4 KiB is the default": the write workloads and
# cached scans at both page sizes, side by side, before the default changed.
# Run from a directory on a real disk holding bin/strata,
# bin/strata-bench-child and bin/strata-bench-peers built from one revision.
# io/bbolt and io/pebble may hold the peers' 2,684,355-row loads (they are
# reloaded otherwise). Results: c-*, e-*, i-* {txt,json}.
set -u
C="./bin/strata bench --strata-bin ./bin/strata-bench-child --peers-bin ./bin/strata-bench-peers"
r() { name=$1; shift; $C "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
# Cached sysbench (issue 10's cached goals): 250,000 rows, fresh loads, the
# read-only workload first on the pristine load.
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 10s --workload oltp_read_only,oltp_write_only,oltp_insert"
# Cached JSON events writes (the dictionary's case): 42,115 events.
EV="--dataset events --table-size 42115 --cache 40MiB --mem-limit 64MiB --warmup 5s --duration 10s --workload oltp_write_only"
# I/O-bound sysbench: 2,684,355 rows (8x the 64 MiB limit), Strata's cache 24 MiB.
IO="--dataset sysbench --table-size 2684355 --mem-limit 64MiB --warmup 5s --duration 20s --workload oltp_write_only,ycsb_a --distribution uniform --keep --dir io"
r c-peers --engines bbolt,pebble $CACHED
r i-peers --engines bbolt,pebble --cache 32MiB $IO
for round in 1 2; do
	if [ $round = 1 ]; then order="4KiB 16KiB"; else order="16KiB 4KiB"; fi
	for ps in $order; do
		r c-$ps-$round --engines strata --page-size $ps $CACHED
		r e-$ps-$round --engines strata --page-size $ps $EV
		r i-$ps-$round --engines strata --page-size $ps --cache 24MiB $IO
	done
done
touch DONE
