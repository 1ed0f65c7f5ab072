#!/usr/bin/env bash
# Issue 10's measurements of docs/BENCHMARKS.md, "Write path (issue 10)".
# Run from a directory on a real disk holding the binaries (see sizes.sh).
set -u
mkdir -p i10
B="./strata bench --peers-bin ./strata-bench-peers"
run() { name=$1; shift; echo "== $name $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; $B "$@" --json i10/$name.json > i10/$name.txt 2> i10/$name.err; echo "   exit $? $(date -u +%T)"; }
run cached --engines strata,bbolt,pebble --workload oltp_read_only,oltp_write_only,oltp_insert --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 12s --dir i10/d-cached --keep
run sync8 --engines strata,bbolt,pebble --workload oltp_write_only --sync --threads 8 --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 2s --duration 10s --dir i10/d-cached --keep
run iobound --engines strata,bbolt,pebble --workload oltp_write_only --table-size 2700000 --cache 32MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/d-io --keep
# Re-run of 2026-12-01 (third session): Strata's cache at 24 MiB, 16 KiB and 4 KiB pages; bbolt as before.
run iobound-24 --engines strata --workload oltp_write_only --table-size 2700000 --cache 24MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/d-io --keep
run iobound-4k --engines strata --page-size 4KiB --workload oltp_write_only --table-size 2700000 --cache 24MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/d-io4k --keep
run iobound-bbolt --engines bbolt --workload oltp_write_only --table-size 2700000 --cache 32MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/d-io --keep
# Final run of 2026-12-01 (fourth session), fresh directories, second round in the other order.
run f-cached --engines strata,bbolt,pebble --workload oltp_read_only,oltp_write_only,oltp_insert --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 12s --dir i10/f-cached --keep
run f-sync8 --engines strata,bbolt,pebble --workload oltp_write_only --sync --threads 8 --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 2s --duration 10s --dir i10/f-cached --keep
run f-io16 --engines strata --workload oltp_write_only --table-size 2700000 --cache 24MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/f-io16 --keep
run f-io4k --engines strata --page-size 4KiB --workload oltp_write_only --table-size 2700000 --cache 24MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/f-io4k --keep
run f-iopeers --engines bbolt,pebble --workload oltp_write_only --table-size 2700000 --cache 32MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/f-iopeers --keep
run f-iopeers-2 --engines bbolt,pebble --workload oltp_write_only --table-size 2700000 --cache 32MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/f-iopeers --keep
run f-io4k-2 --engines strata --page-size 4KiB --workload oltp_write_only --table-size 2700000 --cache 24MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/f-io4k --keep
run f-io16-2 --engines strata --workload oltp_write_only --table-size 2700000 --cache 24MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/f-io16 --keep
# Session of 2026-12-02 (code b871920: replaced-pages checkpoints, inner pages kept, cleaner span reads), fresh directories.
run g-cached --engines strata,bbolt,pebble --workload oltp_read_only,oltp_write_only,oltp_insert --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 12s --dir i10/g-cached --keep
run g-io16 --engines strata --workload oltp_write_only --table-size 2700000 --cache 24MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/g-io16 --keep
run g-io4k --engines strata --page-size 4KiB --workload oltp_write_only --table-size 2700000 --cache 24MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/g-io4k --keep
run g-iopeers --engines bbolt,pebble --workload oltp_write_only --table-size 2700000 --cache 32MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/g-iopeers --keep
run g-io4k-2 --engines strata --page-size 4KiB --workload oltp_write_only --table-size 2700000 --cache 24MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/g-io4k --keep
run g-io16-2 --engines strata --workload oltp_write_only --table-size 2700000 --cache 24MiB --mem-limit 64MiB --warmup 5s --duration 20s --dir i10/g-io16 --keep
# Session of 2026-12-04 (sixth; code 197fd96): Strata in strata-bench-child, caches 24/32/40 MiB, fresh directories
# (build: go build -buildvcs=true -o . ./cmd/strata ./cmd/strata-bench-child && (cd bench && go build -o ../strata-bench-peers ./cmd/strata-bench-peers)).
B="./strata bench --peers-bin ./strata-bench-peers --strata-bin ./strata-bench-child"
IO="--workload oltp_write_only --table-size 2700000 --mem-limit 64MiB --warmup 5s --duration 20s --keep"
run h-io16 --engines strata --cache 40MiB $IO --dir i10/h-io16
run h-io4k --engines strata --page-size 4KiB --cache 40MiB $IO --dir i10/h-io4k
run h-iopeers --engines bbolt,pebble --cache 32MiB $IO --dir i10/h-iopeers
run h-io4k-24 --engines strata --page-size 4KiB --cache 24MiB $IO --dir i10/h-io4k24
run h-iopeers-2 --engines bbolt,pebble --cache 32MiB $IO --dir i10/h-iopeers
run h-io4k-2 --engines strata --page-size 4KiB --cache 40MiB $IO --dir i10/h-io4k
run h-io16-2 --engines strata --cache 40MiB $IO --dir i10/h-io16
run h2-io16-32 --engines strata --cache 32MiB $IO --dir i10/h2-io16
run h2-io4k-32 --engines strata --page-size 4KiB --cache 32MiB $IO --dir i10/h2-io4k
run h2-iopeers --engines bbolt,pebble --cache 32MiB $IO --dir i10/h2-iopeers
run h2-io16-24 --engines strata --cache 24MiB $IO --dir i10/h2-io16-24
run h2-io4k-32-2 --engines strata --page-size 4KiB --cache 32MiB $IO --dir i10/h2-io4k
run h2-io16-32-2 --engines strata --cache 32MiB $IO --dir i10/h2-io16
run h2-iopeers-2 --engines bbolt,pebble --cache 32MiB $IO --dir i10/h2-iopeers
# The profile: STRATA_BENCH_CPUPROFILE=cpu4k (and STRATA_BENCH_HEAPPROFILE=heap4k with --cache 40MiB) before
# $B --engines strata --page-size 4KiB --cache 32MiB $IO --dir i10/h2-io4k --duration 20s
