#!/bin/bash
# docs/BENCHMARKS.md, "A climb that creeps is stalled" (twenty-fifth session), second sitting: skewed keys
# only, six rounds in alternating order, old = 7c25313 against fin = 03302a8 (the rule after review), at the
# nvme preset's 20 us reads and at 40 us. Run from a directory holding old/strata and fin/strata.
# To build: for each revision R and directory D, `git worktree add /tmp/wt R && (cd /tmp/wt && go build
# -o $PWD/D/ ./cmd/strata) && git worktree remove /tmp/wt` (old = 7c25313, new = 9d38fce, fin = 03302a8).
set -u
r() { name=$1; shift; "$@" > $name.txt 2>&1; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
for round in 1 2 3 4 5 6; do
  order="old fin"; [ $((round % 2)) = 0 ] && order="fin old"
  for b in $order; do
    for lat in 40us 20us; do
      r b-$lat-$b-$round ./$b/strata pool-sweep --scenario nvme+deflate --dist skewed --shares 0,auto \
        --read-latency $lat --out out-b-$lat-$b-$round --log out-b-$lat-$b-$round/log.json
    done
  done
done
touch DONE-b
