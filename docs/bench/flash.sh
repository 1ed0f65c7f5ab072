#!/usr/bin/env bash
# The flash cache measurements of docs/BENCHMARKS.md, "Flash cache (issue
# 13)": document 003's experiment on simulated devices. Run from a
# directory on a real disk (not tmpfs) holding the binaries:
#   go build -o . ./cmd/strata ./cmd/strata-bench-child && go test -c -o strata.test .
# Each configuration is one `strata bench` invocation on a fresh load:
# random point reads (oltp_point_select), then updates by primary key
# (oltp_update_non_index) on the same data, Strata only, 2 threads:
#   a       data on a simulated HDD alone
#   b-all   simulated HDD + 64 MiB flash cache on a simulated SATA SSD, admission all
#   b-2nd   the same, admission second (pages leaving RAM a second time)
#   b-rate  b-all with a 2 MiB/s flash write budget
#   c       data on a simulated SATA SSD alone
#   b-all128  b-all with a 128 MiB flash cache (round 3 only)
# Round 1: a, b-all, b-2nd, c, restart; round 2: b-all, b-2nd, c, b-rate;
# round 3: b-all, b-2nd, c, b-all128.
# Then BenchmarkFlashWarmRestart (time until the flash hit ratio is back
# after a restart, with and without persistence).
# Results: fl/<name>-<round>.{txt,json}, fl/restart.txt; `flash.sh table`
# prints the table rows from the JSON files.
# Usage: flash.sh [rounds...]   e.g. `flash.sh 1 2 3`, `NICE="nice -n 10" flash.sh 1`
# About 6 minutes for round 1 (a is the slowest: HDD-bound, and reopening the
# database reads every page from the simulated HDD), 5-6 for each later round
# (without a), 1 for the restart benchmark, on 2 vCPUs: 19 minutes for 1 2 3.
set -u
mkdir -p fl
NICE=${NICE:-}
ROWS=${ROWS:-600000}
B="$NICE ./strata bench --engines strata --workload oltp_point_select,oltp_update_non_index \
   --table-size $ROWS --cache 16MiB --warmup ${WARMUP:-10s} --duration ${DURATION:-20s}"
one() { # name round flags...
	local name=$1 round=$2
	shift 2
	echo "== $name-$round $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
	rm -rf "fl/d-$name"
	$B --dir "fl/d-$name" --json "fl/$name-$round.json" "$@" > "fl/$name-$round.txt" 2>&1
	echo "   exit $? $(date -u +%T)"
	rm -rf "fl/d-$name"
}
restart() {
	echo "== restart $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
	mkdir -p fl/tmp
	if [ -x ./strata.test ]; then
		STRATA_BENCH_DIR=fl/tmp $NICE ./strata.test -test.run '^$' -test.bench FlashWarmRestart \
			-test.benchtime 1x -test.v > fl/restart.txt 2>&1
	else
		STRATA_BENCH_DIR=$PWD/fl/tmp $NICE go test -run '^$' -bench FlashWarmRestart -benchtime 1x -v \
			github.com/stratadb/strata > fl/restart.txt 2>&1
	fi
	echo "   exit $? $(date -u +%T)"
}
table() { # one row per run and workload
	printf '| run | workload | txn/s | p50 ms | p99 ms | RAM miss ratio | flash hit ratio | flash entries | admitted | rejected (2nd) | dropped busy | dropped budget | flash written MiB | free buffer waits | page store reads/txn |\n'
	printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
	for f in fl/*.json; do
		jq -r --arg run "$(basename "$f" .json)" '.results[] | .metrics as $m |
			"| \($run) | \(.spec.workload) | \(.txn_per_sec|floor) | \(.p50_us/1000*100|floor/100) | \(.p99_us/1000*100|floor/100) | " +
			"\($m["pool.miss_ratio"]*1000|floor/1000) | \(($m["flash.hit_ratio"] // 0)*1000|floor/1000) | \($m["flash.entries"] // "–") | " +
			"\($m["flash.admitted"] // "–") | \($m["flash.rejected"] // "–") | \($m["flash.dropped_busy"] // "–") | \($m["flash.dropped_rate"] // "–") | " +
			"\(($m["flash.bytes_written"] // 0)/1048576*10|floor/10) | \($m["pool.free_buffer_waits"]) | \($m["store.disk_reads"]/.txns*100|floor/100) |"' "$f"
	done
}
round() {
	[ "$1" = 1 ] && one a "$1" --device hdd
	one b-all "$1" --device hdd --flash-cache 64MiB --flash-device ssd --flash-admission all
	one b-2nd "$1" --device hdd --flash-cache 64MiB --flash-device ssd --flash-admission second
	one c "$1" --device ssd
	[ "$1" = 2 ] && one b-rate "$1" --device hdd --flash-cache 64MiB --flash-device ssd --flash-admission all --flash-write-rate 2MiB
	[ "$1" = 1 ] && restart
	# the update phase with a flash cache twice the data (the ring's dead space)
	[ "$1" = 3 ] && one b-all128 "$1" --device hdd --flash-cache 128MiB --flash-device ssd --flash-admission all
	return 0
}
if [ "${1:-}" = table ]; then
	table
	exit 0
fi
[ $# -eq 0 ] && set -- 1 2
for r in "$@"; do
	round "$r"
done
