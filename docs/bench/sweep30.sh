#!/bin/bash
# docs/BENCHMARKS.md, "Issue 9's sweep on the final code" (thirtieth session): sweep29.sh's sweep
# (2 threads, 64 MiB limit, Strata's cache the limit less 24 MiB, 4 KiB pages, the peers beside
# Strata; point reads on both data sets, special keys and range scans on sysbench rows, fixed R
# beside auto for sysbench point reads) on the session's final code, outputs named s30-*. Run from
# a directory holding strata, strata-bench-child and strata-bench-peers of one revision.
TAG=s30 exec "$(dirname "$0")/sweep29.sh"
