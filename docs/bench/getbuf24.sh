#!/bin/bash
# docs/BENCHMARKS.md, "The server's GET buffer" (twenty-fourth session): redis-benchmark GETs against
# `strata serve` built before (a5ee27e) and after (76fe0f7, the server as b3893fb left it) GET read
# into a buffer the connection keeps. Run from a directory holding old/strata and new/strata. Each
# round makes 200,000 SETs of 1 KiB values over 100,000 random keys, then measures GET over the same
# keys, rounds alternating the builds; the server's Go collector metrics give the collections during
# the GETs.
set -u
port=6391; maddr=127.0.0.1:9391
gc() { curl -s http://$maddr/metrics | awk '$1=="go_gc_duration_seconds_count"{print $2}'; }
for round in 1 2 3; do
 for b in old new; do
  rm -rf data-$b; ./$b/strata serve data-$b --addr 127.0.0.1:$port --metrics-addr $maddr --cache 64MiB --appendfsync no > serve-$b-$round.log 2>&1 &
  pid=$!; sleep 1
  redis-benchmark -p $port -t set -n 200000 -r 100000 -d 1024 -c 8 -P 16 -q > /dev/null
  g0=$(gc)
  redis-benchmark -p $port -t get -n 2000000 -r 100000 -d 1024 -c 8 -P 16 -q --csv > get-$b-$round.csv
  g1=$(gc)
  echo "$b round $round: $(tail -1 get-$b-$round.csv) gcs $((g1-g0)) rss_kb $(awk '/VmHWM/{print $2}' /proc/$pid/status)" | tee -a getbuf.txt
  kill $pid; wait $pid
 done
done
