#!/bin/bash
# docs/BENCHMARKS.md, "Frames take the memory sparse images leave" (twenty-fourth session): auto R,
# point reads, the build before (old/) and after (new/) the change, three rounds alternating, at the
# point it is for (sysbench special keys 1.5x) and three where the images are in use or the data is
# beyond the memory. Run from a directory holding old/ and new/ (strata, strata-bench-child) and
# sweep17.sh's loads d-sysbench, d-events (--keep).
for round in 1 2 3; do
 for b in old new; do
  S="./$b/strata bench sweep --param table-size --strata-bin ./$b/strata-bench-child \
     --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
     --strata-page-size 4KiB --strata-r auto --engine strata --workload oltp_point_select"
  $S --values 1.5x,8x --dir d-sysbench --dataset sysbench --distribution special --json sp-special-$b-$round.json > sp-special-$b-$round.txt 2>&1
  $S --values 4x --dir d-sysbench --dataset sysbench --distribution uniform --json sp-uniform-$b-$round.json > sp-uniform-$b-$round.txt 2>&1
  $S --values 2x --dir d-events --dataset events --distribution uniform --json sp-events-$b-$round.json > sp-events-$b-$round.txt 2>&1
 done
done
touch SPARSEDONE
