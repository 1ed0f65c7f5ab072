#!/bin/bash
# docs/BENCHMARKS.md, thirty-first session: load Strata's sweep stores with the build in the current
# directory (strata, strata-bench-child, strata-bench-peers of one revision) into $LOADS/d-sysbench
# and $LOADS/d-events, beside the peers' loads of an earlier session linked in (PEERS, default the
# twenty-fifth session's /tmp/s25/sw). The measured run after each load is 1 s and not reported.
L=${LOADS:-/tmp/s31}
P=${PEERS:-/tmp/s25/sw}
mkdir -p $L/d-sysbench $L/d-events
for ds in sysbench events; do
  for d in $P/d-$ds/bbolt-* $P/d-$ds/pebble-*; do ln -sfn $d $L/d-$ds/$(basename $d); done
done
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 1s --duration 1s --keep \
   --strata-page-size 4KiB --values 0.25x,0.5x,1x,1.5x,2x,4x,8x --engine strata --strata-r auto --workload oltp_point_select"
$S --dir $L/d-sysbench --dataset sysbench --json load-sysbench.json > load-sysbench.txt 2>&1
$S --dir $L/d-events --dataset events --json load-events.json > load-events.txt 2>&1
