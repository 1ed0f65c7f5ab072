#!/usr/bin/env bash
# redis-benchmark against Debian's redis-server (in memory, no persistence),
# strata serve with the data in its cache, and strata serve with the data
# about 8x its cache, side by side (docs/BENCHMARKS.md, "strata serve").
# Needs redis-server and redis-tools (apt-get install redis-server) and
# python3. Usage: docs/serve-bench/run.sh [path-to-strata-binary]
set -euo pipefail
S=${1:-./strata}
W=$(mktemp -d)
here=$(dirname "$0")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$W"' EXIT
python3 "$here/load.py" 1000000 >"$W/load.resp" # 1 M keys, 100-byte values, MSETs of 100
redis-server --port 17001 --save "" --appendonly no >"$W/redis.log" 2>&1 & pids+=($!)
"$S" serve "$W/fit" --addr 127.0.0.1:17002 --cache 512MiB >"$W/fit.log" 2>&1 & pids+=($!)
"$S" serve "$W/small" --addr 127.0.0.1:17003 --cache 14MiB >"$W/small.log" 2>&1 & pids+=($!)
sleep 1
for p in 17001 17002 17003; do redis-cli -p $p --pipe <"$W/load.resp" | tail -1; done
names=([17001]=redis [17002]=strata-fit [17003]=strata-8x)
run() { # label redis-benchmark-args...
	local label=$1; shift
	for rep in 1 2 3; do
		for p in 17001 17002 17003; do
			redis-benchmark -p $p "$@" --csv 2>/dev/null | tail -n +2 | sed "s/^/${names[$p]},$label,$rep,/"
		done
	done
}
echo "target,test,rep,name,rps,avg_ms,min_ms,p50_ms,p95_ms,p99_ms,max_ms"
# GETs first: SET and MSET overwrite the values with redis-benchmark's 'xxx...'.
run c50 -t get -r 1000000 -n 200000 -c 50
run c50P16 -t get -r 1000000 -n 300000 -c 50 -P 16
run c50 -t set -r 1000000 -n 10000 -c 50 -d 100
run c50 -t mset -r 1000000 -n 5000 -c 50 -d 100
run c50P16 -t set -r 1000000 -n 20000 -c 50 -d 100 -P 16
