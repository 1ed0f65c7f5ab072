#!/usr/bin/env bash
# The page-size sweeps of docs/BENCHMARKS.md, "4 KiB against 16 KiB pages
# across data sizes": the data-size sweeps of sizes.sh with Strata at both
# page sizes side by side (each its own load), automatic R and three fixed
# R, against bbolt and Pebble under the same 64 MiB limit. Run from a
# directory on a real disk (not tmpfs) holding the binaries:
#   go build -o . ./cmd/strata ./cmd/strata-bench-child && (cd bench && go build -o ../strata-bench-peers ./cmd/strata-bench-peers)
# Each sweep takes about 20 minutes on 2 vCPUs; the loads are kept in
# d-<dataset> and reused by the later sweeps. Results: ps/<name>.{txt,json,png}.
set -u
mkdir -p ps
S="./strata bench sweep --param table-size --peers-bin ./strata-bench-peers --mem-limit 64MiB --cache 32MiB \
   --strata-cache fill --strata-overhead 32MiB --warmup 6s --duration 5s --keep \
   --strata-page-size 4KiB,16KiB --strata-r auto,0,0.5,0.95 --values 0.25x,0.5x,1x,2x,4x,8x"
one() { # name dataset workload distribution threads
	echo "== $1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
	$S --dir "d-$2" --engine strata,bbolt,pebble --dataset "$2" --workload "$3" --distribution "$4" --threads "$5" \
		--json "ps/$1.json" --plot "ps/$1.png" > "ps/$1.txt" 2> "ps/$1.err"
	echo "   exit $? $(date -u +%T)"
}
one sysbench-point-uniform sysbench oltp_point_select uniform 2
one events-point-uniform events oltp_point_select uniform 2
one sysbench-ro-uniform sysbench oltp_read_only uniform 2
one sysbench-point-special sysbench oltp_point_select special 2
