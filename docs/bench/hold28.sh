#!/bin/bash
# docs/BENCHMARKS.md, "Why auto R misses the best fixed R on cached writes" (twenty-eighth session), the sixth sitting:
# base (b8f2551) vs final (9cd2c37) vs hold (the first build of a kept copy trial holding its R), 30 s measured.
. "$(dirname "$0")/runs28.sh"
DURATION=30s
for round in 1 2 3; do for b in base final hold; do run $b $b-0.5x-$round 0.5x; done; done
for round in 1 2; do for b in base hold; do run $b $b-1x-$round 1x; done; done
for round in 1 2; do for b in base hold; do rrun $b $b-sysbench-0.5x-uniform-$round sysbench 0.5x uniform; done; done
touch DONE-hold
