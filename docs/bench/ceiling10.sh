#!/bin/bash
# The inner-page ceiling (tenth session): 8e579a5 auto and R = 0 against cc24fa2 auto, 4 KiB pages,
# uniform point reads at 4x and 8x the 64 MiB limit, three rounds with the order alternated.
# run from a directory holding the loads (d-events, d-sysbench: docs/bench/sweep9.sh) and bin/ (8e579a5) and new/ (cc24fa2) builds
run() { # bin tag dataset rs
  local bin=$1 tag=$2 ds=$3 rs=$4
  ./$bin/strata bench sweep --param table-size --strata-bin ./$bin/strata-bench-child --peers-bin ./bin/strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r $rs --values 4x,8x --engine strata --dir d-$ds --dataset $ds --workload oltp_point_select --distribution uniform \
   --json e1-$tag-$ds.json --plot e1-$tag-$ds.png > e1-$tag-$ds.txt 2>&1
}
for round in 1 2 3; do
  for ds in events sysbench; do
    if [ $((round % 2)) = 1 ]; then run bin old$round $ds auto,0; run new new$round $ds auto
    else run new new$round $ds auto; run bin old$round $ds auto,0; fi
  done
  echo "round $round $(date -u +%T)" >> e1.progress
done

