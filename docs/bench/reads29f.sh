#!/bin/bash
# docs/BENCHMARKS.md, "Far-view jumps measured as trials, the copy arm tried near the floor" (twenty-ninth session):
# point reads where the far view and the copy arm act, new5 (the final code) vs base (56f6970), 5 s
# measured, 2 rounds, on the twenty-eighth session's read loads (dr-DATASET-VALUES). Runs are
# runs28.sh's (copy it beside this script).
. "$(dirname "$0")/runs28.sh"
for round in 1 2; do
  for p in "sysbench 1x special" "sysbench 1.5x special" "sysbench 2x special" "sysbench 2x uniform" "events 2x uniform"; do
    set -- $p
    for b in new5 base; do rrun $b $b-$1-$2-$3-f$round $1 $2 $3; done
  done
done
touch DONE-readsf
