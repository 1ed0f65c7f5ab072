#!/bin/bash
# docs/BENCHMARKS.md, "A climb that creeps is stalled" (twenty-fifth session): document 000's simulated
# scenarios, fixed R against auto, two builds side by side (old = 7c25313, new = 9d38fce), three rounds in
# alternating order. nvme+deflate at the scenario's 20 us reads and at 40 us (T_disk_read about half of
# T_decom, the ratio the AMD host of the earlier sessions had at 20 us); hdd+lz4 once per build.
# Run from a directory holding old/strata and new/strata.
# To build: for each revision R and directory D, `git worktree add /tmp/wt R && (cd /tmp/wt && go build
# -o $PWD/D/ ./cmd/strata) && git worktree remove /tmp/wt` (old = 7c25313, new = 9d38fce, fin = 03302a8).
set -u
r() { name=$1; shift; "$@" > $name.txt 2>&1; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
for round in 1 2 3; do
  order="old new"; [ $round = 2 ] && order="new old"
  for b in $order; do
    for lat in 20us 40us; do
      r nvme-$lat-$b-$round ./$b/strata pool-sweep --scenario nvme+deflate --dist skewed,uniform --shares 0,auto \
        --read-latency $lat --out out-nvme-$lat-$b-$round --log out-nvme-$lat-$b-$round/log.json
    done
  done
done
for b in old new; do
  r hdd-$b ./$b/strata pool-sweep --scenario hdd+lz4 --dist skewed,uniform --shares 0.95,auto \
    --out out-hdd-$b --log out-hdd-$b/log.json
done
touch DONE
