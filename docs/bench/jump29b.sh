#!/bin/bash
# docs/BENCHMARKS.md, "Far-view jumps measured as trials, the copy arm tried near the floor" (twenty-ninth session), the second sitting:
# base (56f6970) vs new2 (jumps measured, and the copy arm tried just above the floor where the
# compressed ghost sees misses) vs R 0.95 (base), cached oltp_write_only, 30 s measured: 4 rounds at
# 0.5x, 2 at 1x and 2x. Runs are runs28.sh's (copy it beside this script).
. "$(dirname "$0")/runs28.sh"
DURATION=30s
for round in 1 2 3 4; do for b in new2 base f95; do if [ $b = f95 ]; then run base f95-0.5x-b$round 0.5x --strata-r 0.95; else run $b $b-0.5x-b$round 0.5x; fi; done; done
for v in 1x 2x; do for round in 1 2; do for b in new2 base; do run $b $b-$v-b$round $v; done; done; done
touch DONE-jumpb
