#!/usr/bin/env bash
# Frame hits without the partition lock (docs/BENCHMARKS.md, "Hits without
# the partition lock"): the previous build ("base") against this one
# ("new"), and bbolt, at cached sysbench point reads, interleaved: per
# round one process per configuration, order rotated per round.
# Binaries in this directory: ./strata-base and ./strata-new, each with its
# ./strata-bench-child-base or -new, and ./strata-bench-peers; the loads in
# d-sysbench (any table-size sweep with --keep). Results: hits/*.json.
# Before it: go test -c -o base.test . (at the previous commit) and
# new.test (this one), alternated:
#   for r in 1 2 3 4 5; do for b in base new; do ./$b.test -test.run '^$' \
#     -test.bench GetParallel -test.cpu 1,2 -test.benchtime 2s; done; done
set -u
mkdir -p hits
run() { # cfg name workload dist value threads round
	local bin=${1%%:*} eng=${1##*:} child=()
	[ "$eng" = strata ] && child=(--strata-bin ./strata-bench-child-$bin)
	./strata-$bin bench sweep --param table-size "${child[@]}" --peers-bin ./strata-bench-peers --mem-limit 64MiB \
		--cache 32MiB --strata-cache fill --strata-overhead 24MiB --warmup 10s --duration 5s --keep \
		--strata-page-size 4KiB --strata-r auto --values $5 --dir d-sysbench --engine $eng --dataset sysbench \
		--workload $3 --distribution $4 --threads $6 --json hits/$2-$bin-$eng-$7.json > /dev/null 2> hits/$2-$bin-$eng-$7.err
}
one() {
	echo "== $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
	cfgs=(base:strata new:strata new:bbolt)
	for round in 1 2 3; do
		for k in 0 1 2; do
			run ${cfgs[$(( (k + round - 1) % 3 ))]} "$@" $round
		done
	done
}
one pt-0.25 oltp_point_select uniform 0.25x 2
one pt-0.5 oltp_point_select uniform 0.5x 2
one pt-0.5-t4 oltp_point_select uniform 0.5x 4
echo "== done $(date -u +%T)"
