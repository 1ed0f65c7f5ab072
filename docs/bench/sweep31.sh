#!/bin/bash
# docs/BENCHMARKS.md, thirty-first session: issue 9's sweep (sweep29.sh) on Strata stores loaded by
# this code. The sweeps of the twenty-seventh to thirtieth sessions reused the twenty-fifth session's
# loads, made before the table dictionary (their pages took about 1.5× as long to decompress). LOADS
# must hold d-sysbench and d-events with Strata's stores loaded by the build under test (the peers'
# loads may be older: their engines did not change); docs/bench/load31.sh makes them.
# Run from a directory holding strata, strata-bench-child and strata-bench-peers of one revision.
LOADS=${LOADS:-/tmp/s31} TAG=s31 exec "$(dirname "$0")/sweep29.sh"
