#!/bin/bash
# docs/BENCHMARKS.md, "Issue 9's sweep and document 000's scenarios on the final code" (thirtieth
# session): cached oltp_write_only at 2x the memory, auto beside fixed R 0.05, 0.5 and 0.95
# (30 s measured, 3 rounds, the four alternated within each round). Runs are runs28.sh's (copy it
# beside this script); the build is the directory "new".
. "$(dirname "$0")/runs28.sh"
DURATION=30s
for round in 1 2 3; do for v in 2x; do
  run new auto-$v-w$round $v
  for r in 0.05 0.5 0.95; do run new f$r-$v-w$round $v --strata-r $r; done
done; done
touch DONE-writes
