#!/usr/bin/env bash
# docs/BENCHMARKS.md, "Commits that read before they lock" (issue 10):
# builds side by side, fresh loads, alternated. Run from a directory on a
# real disk. BASE and NEW are checkouts (or worktrees) of the two builds.
set -u
BASE=${BASE:?checkout of the base build} NEW=${NEW:?checkout of the new build}
for b in BASE NEW; do
  (cd "${!b}" && go build -buildvcs=true -o "$PWD/bin-$b/" ./cmd/strata ./cmd/strata-bench-child)
done
(cd "$NEW/bench" && go build -o "$PWD/strata-bench-peers" ./cmd/strata-bench-peers)
bench() { b=$1; shift; "$PWD/bin-$b/strata" bench --peers-bin "$PWD/strata-bench-peers" --strata-bin "$PWD/bin-$b/strata-bench-child" "$@"; }
IO="--table-size 2700000 --mem-limit 64MiB --warmup 5s --duration 20s"
# I/O-bound oltp_write_only (data 8x the limit), three rounds, the order rotated.
r=0
for order in "BASE NEW" "NEW BASE" "BASE NEW"; do
  r=$((r+1))
  for ps in 16KiB 4KiB; do
    for b in $order; do
      bench $b --engines strata --page-size $ps --cache 24MiB --workload oltp_write_only $IO --dir d --json w-$b-$ps-$r.json > w-$b-$ps-$r.txt 2>&1
    done
  done
  bench NEW --engines bbolt --cache 32MiB --workload oltp_write_only $IO --dir d --json w-bbolt-$r.json > w-bbolt-$r.txt 2>&1
done
# I/O-bound ycsb_a with uniform keys (point reads and one-row updates, half each), two rounds.
r=0
for order in "BASE NEW" "NEW BASE"; do
  r=$((r+1))
  for ps in 16KiB 4KiB; do
    for b in $order; do
      bench $b --engines strata --page-size $ps --cache 24MiB --workload ycsb_a,oltp_write_only --distribution uniform $IO --dir d --json y-$b-$ps-$r.json > y-$b-$ps-$r.txt 2>&1
    done
  done
done
bench NEW --engines bbolt,pebble --cache 32MiB --workload ycsb_a,oltp_write_only --distribution uniform $IO --dir d --json y-peers.json > y-peers.txt 2>&1
# Cached goals (issue 10): as docs/bench/writes.sh's "cached".
for b in BASE NEW; do
  bench $b --engines strata --workload oltp_read_only,oltp_write_only,oltp_insert --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 12s --dir d --json c-$b.json > c-$b.txt 2>&1
done
bench NEW --engines bbolt,pebble --workload oltp_read_only,oltp_write_only,oltp_insert --table-size 250000 --cache 128MiB --mem-limit 224MiB --warmup 3s --duration 12s --dir d --json c-peers.json > c-peers.txt 2>&1
