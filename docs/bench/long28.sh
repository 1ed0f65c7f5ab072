#!/bin/bash
# docs/BENCHMARKS.md, "Why auto R misses the best fixed R on cached writes" (twenty-eighth session), the fifth sitting:
# base (b8f2551) vs final (9cd2c37) vs R 0.95 (base), 30 s measured, 3 rounds at 0.5x and 2 at 1x.
. "$(dirname "$0")/runs28.sh"
DURATION=30s
for round in 1 2 3; do for b in base final f95; do if [ $b = f95 ]; then run base f95-0.5x-$round 0.5x --strata-r 0.95; else run $b $b-0.5x-$round 0.5x; fi; done; done
for round in 1 2; do for b in base final; do run $b $b-1x-$round 1x; done; done
touch DONE-long
