#!/bin/bash
# docs/BENCHMARKS.md, "Far-view jumps measured as trials, the copy arm tried near the floor" (twenty-ninth session), the third sitting:
# base (56f6970) vs new3 (the final code: jumps measured, the copy arm near the floor, after review)
# vs R 0.95 (base): cached oltp_write_only, 30 s measured, 3 rounds at 0.5x, 2 at 1x and 2x; then
# point reads (5 s, 2 rounds) where the far view and the copy arm act, on the twenty-eighth session's
# read loads (dr-DATASET-VALUES). Runs are runs28.sh's (copy it beside this script).
. "$(dirname "$0")/runs28.sh"
DURATION=30s
for round in 1 2 3; do for b in new3 base f95; do if [ $b = f95 ]; then run base f95-0.5x-c$round 0.5x --strata-r 0.95; else run $b $b-0.5x-c$round 0.5x; fi; done; done
for v in 1x 2x; do for round in 1 2; do for b in new3 base; do run $b $b-$v-c$round $v; done; done; done
DURATION=5s
for round in 1 2; do
  for p in "sysbench 1x special" "sysbench 1.5x special" "sysbench 2x special" "sysbench 2x uniform" "sysbench 4x uniform" "events 2x uniform"; do
    set -- $p
    for b in new3 base; do rrun $b $b-$1-$2-$3-$round $1 $2 $3; done
  done
done
touch DONE-jumpc
