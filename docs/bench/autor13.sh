#!/bin/bash
# docs/BENCHMARKS.md, "Images in pieces of 64-byte granules" (auto R against fixed R): issue 9's "auto within 5% of the
# best fixed R", Strata only, 4 KiB pages, the sizes where R matters (the data does not fit in the
# frames and the compressed tier holds some of it), medians of three runs in alternating order.
# Thirteenth session: the same as autor12.sh on the code with images in pieces. Run from a directory
# holding strata and strata-bench-child built from one revision; d-events and
# d-sysbench may hold the loads of sweep12.sh (reused).
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB --strata-r auto,0,0.25,0.5,0.75,0.95 --values 1x,1.5x,2x,4x --engine strata --repeat 3"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json --plot $name.png > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run autor-sysbench --dir d-sysbench --dataset sysbench --workload oltp_point_select --distribution uniform
run autor-events --dir d-events --dataset events --workload oltp_point_select --distribution uniform
touch AUTORDONE
# Then docs/bench/writes13.sh (issue 10 at the 4 KiB default) from the same directory.
