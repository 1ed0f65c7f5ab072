#!/bin/bash
# docs/BENCHMARKS.md, twenty-second session: oltp_write_only (uniform, 2 threads, 64 MiB limit, cache 32 MiB,
# auto R, 4 KiB pages), base (8fc6244) against fin1 (4620216; its binaries report 814f350, a docs commit after
# it) at single sizes (10:53-10:59), a fresh load per run, two rounds alternating. Run from a directory holding
# base/ and fin1/ (strata, strata-bench-child, strata-bench-peers of each).
ORDER1="base fin1" ORDER2="fin1 base" \
POINTS="sysbench:0.25x sysbench:0.5x sysbench:1x sysbench:8x events:0.5x events:1x" \
exec bash "$(dirname "$0")/ab22.sh"
