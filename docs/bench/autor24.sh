#!/bin/bash
# docs/BENCHMARKS.md, "Auto R against fixed R across the sweep" (twenty-fourth session): issue 9's goal
# "auto within 5% of the best fixed R at every point", Strata alone, point reads at every data size of
# sweep17.sh, single runs, then document 000's simulated scenarios. Run from a directory holding strata
# and strata-bench-child of one revision and the loads d-sysbench, d-events (made by sweep17.sh --keep).
# docs/bench/autor-goals.py autor-*.json (and autor3-*.json, the second sitting) prints the tables.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --engine strata --strata-r auto,0,0.25,0.5,0.75,0.95 --workload oltp_point_select \
   --values 0.25x,0.5x,1x,1.5x,2x,4x,8x"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; "$@" > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run autor-sysbench-uniform $S --dir d-sysbench --dataset sysbench --distribution uniform --json autor-sysbench-uniform.json
run autor-events-uniform $S --dir d-events --dataset events --distribution uniform --json autor-events-uniform.json
run autor-sysbench-special $S --dir d-sysbench --dataset sysbench --distribution special --json autor-sysbench-special.json
mkdir -p poolsweep
run poolsweep ./strata pool-sweep --shares 0,0.25,0.5,0.75,0.95,auto --out poolsweep
# nvme + deflate three more times, frames alone against auto:
for i in 1 2 3; do mkdir -p ps-$i; run ps-$i ./strata pool-sweep --scenario nvme+deflate --shares 0,auto --out ps-$i; done
# Second sitting: the points where a single run put auto more than 5% below the best fixed R, medians
# of three (auto, the best fixed R, and R 0 where the data fits in frames).
R="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --engine strata --repeat 3 --workload oltp_point_select --distribution uniform"
run autor3-sysbench $R --strata-r auto,0,0.95 --values 0.5x,1x,2x --dir d-sysbench --dataset sysbench --json autor3-sysbench.json
run autor3-events $R --strata-r auto,0,0.95 --values 0.25x,2x --dir d-events --dataset events --json autor3-events.json
run autor3-events8 $R --strata-r auto,0.75 --values 8x --dir d-events --dataset events --json autor3-events8.json
run autor3-special $R --strata-r auto,0,0.75 --values 1.5x,8x --dir d-sysbench --dataset sysbench --distribution special --json autor3-special.json
# Third sitting: a longer auto warm-up for nvme + deflate, skewed keys.
for i in 1 2 3; do for w in 8s 16s; do mkdir -p wu-$w-$i; run wu-$w-$i ./strata pool-sweep --scenario nvme+deflate --dist skewed --shares 0,auto --auto-warmup $w --out wu-$w-$i; done; done
touch AUTORDONE
