#!/usr/bin/env bash
# Session 32: strata serve with redcon's connection loop (OLD) against its
# own (NEW), side by side: redis-benchmark throughput (3 rounds, order
# rotated), then each server's RSS after a client streams ~200 MB of SETs
# with redis-cli --pipe (no pause between commands).
# Usage: serve32.sh OLD_STRATA NEW_STRATA OUTDIR
set -euo pipefail
old=$1 new=$2 out=$3
mkdir -p "$out"
start() { # name binary port
	rm -rf "$out/db-$1"
	"$2" serve "$out/db-$1" --addr 127.0.0.1:$3 --appendfsync everysec --cache 64MiB >"$out/$1.log" 2>&1 &
	echo $! >"$out/$1.pid"
	for _ in $(seq 100); do redis-cli -p $3 PING >/dev/null 2>&1 && return; sleep 0.1; done
	echo "$1 did not start"; exit 1
}
start old "$old" 7301
start new "$new" 7302
trap 'kill $(cat "$out"/*.pid) 2>/dev/null || true' EXIT
bench() { # name port
	redis-benchmark -p $2 -r 100000 -d 100 -c 50 -n 100000 -t set,get --csv -q | sed "s/^/$1,P1,/"
	redis-benchmark -p $2 -r 100000 -d 100 -c 50 -n 400000 -P 16 -t set,get --csv -q | sed "s/^/$1,P16,/"
}
for round in 1 2 3; do
	if [ $((round % 2)) = 1 ]; then order="old:7301 new:7302"; else order="new:7302 old:7301"; fi
	for e in $order; do bench ${e%%:*} ${e##*:}; done
done | tee "$out/bench.csv"
# Streaming: 200,000 SETs of 1 KiB values in one pipe.
python3 - "$out/pipe.txt" <<'PY'
import sys
v = "v" * 1000
with open(sys.argv[1], "w") as f:
    for i in range(200000):
        k = "stream:%d" % i
        f.write("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
PY
for e in old:7301 new:7302; do
	n=${e%%:*} p=${e##*:}
	before=$(ps -o rss= -p "$(cat "$out/$n.pid")")
	redis-cli -p $p --pipe <"$out/pipe.txt" | tail -1
	after=$(ps -o rss= -p "$(cat "$out/$n.pid")")
	hwm=$(grep VmHWM /proc/"$(cat "$out/$n.pid")"/status | awk '{print $2}')
	echo "$n,rss_before_kb=$before,rss_after_kb=$after,peak_rss_kb=$hwm"
done | tee "$out/pipe.csv"
