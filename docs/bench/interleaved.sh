#!/usr/bin/env bash
# Interleaved medians of docs/BENCHMARKS.md ("Frames alone as a trial arm"):
# at each point, three rounds of one process per run, each round running a
# previous build's automatic R ("base"), this build's ("new"), then R = 0,
# 0.5 and 0.95 on this build, on the loads of a page-size sweep (run
# pagesize.sh first, or any sweep with --keep, in this directory).
# Binaries: ./strata-new (this code) and ./strata-base (the one to compare),
# each with its ./strata-bench-child-new or -base (go build -o
# strata-bench-child-new ./cmd/strata-bench-child: Strata runs in the child,
# so each build needs its own), ./strata-bench-peers. Results:
# il/<point>-<bin>-<R>-<round>.json.
# The configurations always run in the same order within a round; rotate
# it if position matters on the host (it seemed to: see BENCHMARKS.md).
set -u
mkdir -p il
run() { # bin r name dataset workload dist pagesize value threads round
	./strata-$1 bench sweep --param table-size --strata-bin ./strata-bench-child-$1 --peers-bin ./strata-bench-peers --mem-limit 64MiB --cache 32MiB \
		--strata-cache fill --strata-overhead 32MiB --warmup 10s --duration 5s --keep \
		--strata-page-size $7 --strata-r $2 --values $8 --dir d-$4 --engine strata --dataset $4 \
		--workload $5 --distribution $6 --threads $9 --json il/$3-$1-$2-${10}.json > /dev/null 2> il/$3-$1-$2-${10}.err
}
one() {
	echo "== $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
	for round in 1 2 3; do
		for cfg in base:auto new:auto new:0 new:0.5 new:0.95; do
			run ${cfg%%:*} ${cfg##*:} "$@" $round
		done
	done
}
one ev-16k-0.5 events oltp_point_select uniform 16KiB 0.5x 2
one ev-4k-4 events oltp_point_select uniform 4KiB 4x 2
one sb-sp-16k-2 sysbench oltp_point_select special 16KiB 2x 2
one ev-4k-8 events oltp_point_select uniform 4KiB 8x 2
one sb-4k-4 sysbench oltp_point_select uniform 4KiB 4x 2
one sb-4k-1 sysbench oltp_point_select uniform 4KiB 1x 2
one ev-4k-1 events oltp_point_select uniform 4KiB 1x 2
one ev-16k-0.5-t4 events oltp_point_select uniform 16KiB 0.5x 4
