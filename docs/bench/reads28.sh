#!/bin/bash
# docs/BENCHMARKS.md, "Why auto R misses the best fixed R on cached writes" (twenty-eighth session), reads28.sh: point
# reads (oltp_point_select, 2 threads) at auto R, base (b8f2551) against new, three rounds, order
# alternating (the second sitting: new = v14, the experiment described there; not kept), on loads each point's first run made (64 MiB limit, cache the limit less 32 MiB,
# 4 KiB pages, 10 s warm-up, 5 s measured).
. "$(dirname "$0")/runs28.sh"
for p in "sysbench 0.5x uniform" "sysbench 1x uniform" "sysbench 2x uniform" "sysbench 4x uniform" \
         "sysbench 1.5x special" "events 1x uniform" "events 2x uniform"; do
  set -- $p
  for round in 1 2 3; do
    case $round in 2) order="new base";; *) order="base new";; esac
    for b in $order; do rrun $b $b-$1-$2-$3-$round $1 $2 $3; done
  done
done
touch DONE-reads
