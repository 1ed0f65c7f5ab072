#!/bin/bash
# docs/BENCHMARKS.md, "The controller on cached writes" (twenty-eighth session), reads28.sh: point
# reads (oltp_point_select, 2 threads) at auto R, base (b8f2551) against new, three rounds, order
# alternating (the second sitting: new = v14, the experiment described there; not kept), on loads each point's first run made (64 MiB limit, cache the limit less 32 MiB,
# 4 KiB pages, 10 s warm-up, 5 s measured).
run() { # run BUILD TAG DATASET VALUES DISTRIBUTION
  b=$1; tag=$2; ds=$3; v=$4; dist=$5; mkdir -p dr-$ds-$v
  STRATA_BENCH_POOLTRACE=$PWD/tr-$tag STRATA_BENCH_POOLLOG=$PWD/log-$tag ./$b/strata bench sweep \
    --param table-size --strata-bin ./$b/strata-bench-child --mem-limit 64MiB --cache 32MiB \
    --strata-cache fill --strata-overhead 32MiB --warmup 10s --duration 5s --keep --strata-page-size 4KiB \
    --distribution $dist --engine strata --workload oltp_point_select --dataset $ds --values $v \
    --dir dr-$ds-$v --json rd-$tag.json > rd-$tag.txt 2>&1
}
for p in "sysbench 0.5x uniform" "sysbench 1x uniform" "sysbench 2x uniform" "sysbench 4x uniform" \
         "sysbench 1.5x special" "events 1x uniform" "events 2x uniform"; do
  set -- $p
  for round in 1 2 3; do
    case $round in 2) order="new base";; *) order="base new";; esac
    for b in $order; do run $b $b-$1-$2-$3-$round $1 $2 $3; done
  done
done
touch DONE-reads
