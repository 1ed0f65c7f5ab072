#!/usr/bin/env bash
# The data-size sweeps of docs/BENCHMARKS.md, "Data size at equal memory"
# (issue 9). Run from a directory on a real disk (not tmpfs) holding the
# binaries:
#   go build -o . ./cmd/strata ./cmd/strata-bench-child && (cd bench && go build -o ../strata-bench-peers ./cmd/strata-bench-peers)
# Each sweep takes about 8 minutes on 2 vCPUs (the first, 3 runs a point,
# about 35); the loads are kept in d-<dataset> and reused by the later sweeps. Results: sz/<name>.{txt,json,png}.
set -u
mkdir -p sz
S="./strata bench sweep --param table-size --peers-bin ./strata-bench-peers --mem-limit 64MiB --cache 32MiB \
   --strata-cache fill --strata-overhead 32MiB --warmup 6s --duration 5s --keep"
FULL="--strata-r auto,0,0.25,0.5,0.75,0.95 --values 0.25x,0.5x,1x,2x,4x,8x --repeat 3"
SHORT="--strata-r auto,0,0.5,0.95 --values 0.25x,0.5x,1x,2x,4x,8x"
one() { # name dataset workload distribution threads points
	echo "== $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
	$S $6 --dir "d-$2" --engine strata,bbolt,pebble --dataset "$2" --workload "$3" --distribution "$4" --threads "$5" \
		--json "sz/$1.json" --plot "sz/$1.png" > "sz/$1.txt" 2> "sz/$1.err"
	echo "   exit $? $(date -u +%T)"
}
one sysbench-point-uniform sysbench oltp_point_select uniform 2 "$FULL"
one events-point-uniform events oltp_point_select uniform 2 "$SHORT"
one sysbench-ro-uniform sysbench oltp_read_only uniform 2 "$SHORT"
one sysbench-point-special sysbench oltp_point_select special 2 "$SHORT"
one events-point-special events oltp_point_select special 2 "$SHORT"
one sysbench-point-uniform-4t sysbench oltp_point_select uniform 4 "$SHORT"
one events-ro-uniform events oltp_read_only uniform 2 "$SHORT"
