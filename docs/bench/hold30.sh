#!/bin/bash
# docs/BENCHMARKS.md, "The copy arm waits out a kept jump's hold" (thirtieth session): new (10a064d:
# no copy trial within a kept jump's hold) vs base (4111fdc), alternating; cached oltp_write_only at
# 1x and 2x the memory (30 s measured, 3 rounds) and 0.5x (2 rounds), then sysbench special-key point
# reads at 1x (5 s, 3 rounds). Runs are runs28.sh's (copy it beside this script).
. "$(dirname "$0")/runs28.sh"
DURATION=30s
for round in 1 2 3; do for v in 2x 1x; do for b in new base; do run $b $b-$v-h$round $v; done; done; done
for round in 1 2; do for b in new base; do run $b $b-0.5x-h$round 0.5x; done; done
DURATION=5s
for round in 1 2 3; do for b in new base; do rrun $b $b-sysbench-1x-special-h$round sysbench 1x special; done; done
touch DONE-hold
