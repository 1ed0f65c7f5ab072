#!/bin/bash
# docs/BENCHMARKS.md, "A pending frames confirmation holds R" (twenty-sixth session), third sitting:
# hold26.sh's 40 us runs, eight rounds, old = f3266c1 against final = d430b97 (the rule after review).
# Run from a directory holding old/strata and final/strata; hold26-summary.py prints the runs.
set -u
r() { name=$1; shift; "$@" > $name.txt 2>&1; echo "$(date -u +%H:%M:%S) $name rc=$?" >> progress; }
for round in 1 2 3 4 5 6 7 8; do
  order="old final"; [ $((round % 2)) = 0 ] && order="final old"
  for b in $order; do
    r h-40us-$b-$round ./$b/strata pool-sweep --scenario nvme+deflate --dist skewed --shares 0,auto \
      --read-latency 40us --out out-h-40us-$b-$round --log out-h-40us-$b-$round/log.json
    if false; then
      r h-20us-$b-$round ./$b/strata pool-sweep --scenario nvme+deflate --dist skewed --shares 0,auto \
        --read-latency 20us --out out-h-20us-$b-$round --log out-h-20us-$b-$round/log.json
    fi
  done
done
touch DONE
