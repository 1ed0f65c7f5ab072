#!/bin/bash
# docs/BENCHMARKS.md, "Far-view jumps measured as trials, the copy arm tried near the floor" (twenty-ninth session), the fifth sitting:
# new5 (a kept jump held from above) vs base (56f6970) at 2x, and vs R 0.95 (base) at 0.5x; cached
# oltp_write_only, 30 s measured, 3 rounds. Runs are runs28.sh's (copy it beside this script).
. "$(dirname "$0")/runs28.sh"
DURATION=30s
for round in 1 2 3; do for b in new5 base; do run $b $b-2x-e$round 2x; done; done
for round in 1 2 3; do for b in new5 f95; do if [ $b = f95 ]; then run base f95-0.5x-e$round 0.5x --strata-r 0.95; else run $b $b-0.5x-e$round 0.5x; fi; done; done
touch DONE-jumpe
