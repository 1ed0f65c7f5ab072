#!/bin/bash
# docs/BENCHMARKS.md, twenty-second session, "First version, 1x": oltp_write_only at one size (SIZE, default 1x),
# builds VS (directories under /tmp/s22 holding strata, strata-bench-child, strata-bench-peers) alternating for
# ROUNDS rounds, R values RS, a fresh load per run. The sitting at 10:29-10:31 ran VS="new2 base" RS=auto, new2 being
# the working tree of 454e1a5.
# usage: ab.sh SIZE RS VERSIONS ROUNDS
SIZE=${SIZE:-1x}; RS=${RS:-auto 0.5}; VS=${VS:-base new1}; ROUNDS=${ROUNDS:-2}; WL=${WL:-oltp_write_only}; DS=${DS:-sysbench}
for round in $(seq 1 $ROUNDS); do for r in $RS; do for v in $VS; do
  out=$v-$DS-$SIZE-r$r-$round
  /tmp/s22/$v/strata bench sweep --param table-size --strata-bin /tmp/s22/$v/strata-bench-child --peers-bin /tmp/s22/$v/strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 32MiB --warmup 5s --duration 10s \
   --strata-page-size 4KiB --values $SIZE --engine strata --workload $WL --distribution uniform --dataset $DS \
   --strata-r $r --json $out.json > $out.txt 2> $out.err
  echo "$(date -u +%T) $out $(grep -E '^ +[0-9.]+x' $out.txt | head -1)" >> progress
done; done; done
touch DONE
