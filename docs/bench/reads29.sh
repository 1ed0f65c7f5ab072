#!/bin/bash
# docs/BENCHMARKS.md, "A far-view jump measured as a trial" (twenty-ninth session): point reads where
# the far view and the copy arm act, base (56f6970) vs new2, 5 s measured, 2 rounds, on the
# twenty-eighth session's read loads (dr-DATASET-VALUES). Runs are runs28.sh's (copy it beside this script).
. "$(dirname "$0")/runs28.sh"
for round in 1 2; do
  for p in "sysbench 1x special" "sysbench 1.5x special" "sysbench 2x special" "sysbench 2x uniform" "sysbench 4x uniform" "events 2x uniform"; do
    set -- $p
    for b in new2 base; do rrun $b $b-$1-$2-$3-$round $1 $2 $3; done
  done
done
touch DONE-reads
