#!/bin/bash
# docs/BENCHMARKS.md, "A pending frames confirmation holds R" (twenty-sixth session): document
# 000's NVMe + deflate-6 scenario (simulated device), skewed keys, shares 0 and auto, old = f3266c1 against
# hold = f3266c1 with holdForConfirmation holding steps up only (the first version), at 40 us reads (the AMD host's cost ratio on this host) in eight
# rounds and at the preset's 20 us in four, alternating order, with the controller's trace
# (docs/bench/ctltrace.py). Run from a directory holding old/strata and hold/strata.
set -u
r() { name=$1; shift; "$@" > $name.txt 2>&1; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
for round in 1 2 3 4 5 6 7 8; do
  order="old hold"; [ $((round % 2)) = 0 ] && order="hold old"
  for b in $order; do
    r h-40us-$b-$round ./$b/strata pool-sweep --scenario nvme+deflate --dist skewed --shares 0,auto \
      --read-latency 40us --out out-h-40us-$b-$round --log out-h-40us-$b-$round/log.json
    if [ $round -le 4 ]; then
      r h-20us-$b-$round ./$b/strata pool-sweep --scenario nvme+deflate --dist skewed --shares 0,auto \
        --read-latency 20us --out out-h-20us-$b-$round --log out-h-20us-$b-$round/log.json
    fi
  done
done
touch DONE
