#!/bin/bash
# Run from a directory holding bin/strata and bin/strata-bench-child built from the same revision.
# JSON events, cached writes (oltp_write_only), 4 KiB pages, dictionary on/off, ABBA.
B="./bin/strata bench --engines strata --strata-bin ./bin/strata-bench-child --dataset events --table-size 42115 --page-size 4KiB --workload oltp_write_only --warmup 5s --duration 10s --mem-limit 64MiB --cache 40MiB --keep"
r() { name=$1; shift; $B "$@" --json $name.json > $name.txt 2> $name.err; echo "$(date -u +%H:%M:%S) $name" >> wprogress; }
r w-dict1 --dir w-dict --dictionary=true
r w-nodict1 --dir w-nodict --dictionary=false
r w-nodict2 --dir w-nodict --dictionary=false
r w-dict2 --dir w-dict --dictionary=true
touch WDONE
