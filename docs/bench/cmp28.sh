#!/bin/bash
# docs/BENCHMARKS.md, "Why auto R misses the best fixed R on cached writes" (twenty-eighth session), the fourth sitting:
# base (b8f2551) vs final (9cd2c37: trials by operations, logs) vs v16 (far view refuted once the images drained, copy arm above the floor at 0.05% ghost misses)
. "$(dirname "$0")/runs28.sh"
for round in 1 2 3 4; do for b in base final v16; do run $b $b-0.5x-$round 0.5x; done; done
for v in 1x 2x; do for round in 1 2 3; do for b in base final v16; do run $b $b-$v-$round $v; done; done; done
for p in "sysbench 1.5x special" "sysbench 1x uniform"; do set -- $p; for round in 1 2; do for b in base final v16; do rrun $b $b-$1-$2-$3-$round $1 $2 $3; done; done; done
touch DONE-cmp
