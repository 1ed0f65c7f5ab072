#!/bin/bash
# Run from a directory holding strata, strata-bench-child and strata-bench-peers built from the same
# revision; d11-dict, d11-nodict and d11-sys start empty but for symbolic links to the bbolt loads of
# docs/bench/sweep9.sh (bbolt-*), so that bbolt is not reloaded. Medians: docs/bench/dict-cmp.py.
# Final code: dictionary on against off, JSON events, uniform point reads, Strata 4 and 16 KiB pages, auto R; bbolt beside. ABBA.
S="./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB,16KiB --strata-r auto --values 0.5x,1x,1.5x,2x,4x,8x --engine strata,bbolt \
   --dataset events --workload oltp_point_select --distribution uniform"
run() { name=$1; shift; echo "$(date -u +%H:%M:%S) start $name" >> progress; $S "$@" --json $name.json --plot $name.png > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) end $name rc=$?" >> progress; }
run f-dict1 --dir d11-dict --dictionary=true
run f-nodict1 --dir d11-nodict --dictionary=false
run f-nodict2 --dir d11-nodict --dictionary=false
run f-dict2 --dir d11-dict --dictionary=true
# sysbench rows: the dictionary is judged and rejected (no DICT file, no change)
./strata bench sweep --param table-size --strata-bin ./strata-bench-child --peers-bin ./strata-bench-peers \
   --mem-limit 64MiB --cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
   --strata-page-size 4KiB,16KiB --strata-r auto --values 2x --engine strata,bbolt \
   --dataset sysbench --workload oltp_point_select --distribution uniform --dir d11-sys --json f-sys.json > f-sys.txt 2> f-sys.err
touch E4DONE
