#!/bin/bash
# docs/BENCHMARKS.md, twenty-second session, "Writes beyond the frames": oltp_write_only (uniform keys, 2 threads)
# from 0.25x to 8x the 64 MiB limit, sysbench rows and JSON events, Strata's cache the limit less 32 MiB, auto R,
# 4 KiB pages, every point a fresh load. Run from a directory on a real disk holding base/ (8fc6244, the session's
# start) and new/ (8490976), each with strata, strata-bench-child and strata-bench-peers.
# A: new beside bbolt and Pebble. B: base alone. Then A2 and B2: new and base alone again (a second round).
sweep() { # binaries engines dataset out
  $1/strata bench sweep --param table-size --strata-bin $1/strata-bench-child --peers-bin $1/strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 32MiB --warmup 5s --duration 10s \
   --strata-page-size 4KiB --strata-r auto --values 0.25x,0.5x,1x,2x,4x,8x --engine $2 \
   --workload oltp_write_only --distribution uniform --dataset $3 --json $4.json --plot $4.png > $4.txt 2> $4.err
  echo "$(date -u +%T) done $4" >> progress
}
sweep new strata,bbolt,pebble sysbench A-sysbench
sweep new strata,bbolt,pebble events A-events
sweep base strata sysbench B-sysbench
sweep base strata events B-events
sweep new strata sysbench A2-sysbench
sweep new strata events A2-events
sweep base strata sysbench B2-sysbench
sweep base strata events B2-events
touch DONE
# A3 (run at 11:45, alone): A's first four runs overlapped another benchmark; its 0.25x and 0.5x points again.
# new/strata bench sweep ... --values 0.25x,0.5x --engine strata,bbolt,pebble --dataset sysbench --json A3-sysbench.json
