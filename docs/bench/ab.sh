#!/bin/bash
# docs/BENCHMARKS.md (eighteenth and nineteenth sessions): alternating rounds of several Strata builds and bbolt,
# cached (250,000 rows, cache 128 MiB, limit 224 MiB), one workload. Usage:
#   DUR=8s docs/bench/ab.sh OUTDIR ROUNDS WORKLOAD DIR1 DIR2 ...
# where each DIR holds strata, strata-bench-child and strata-bench-peers built from one revision (bbolt runs
# from DIR1). Prints each build's txn/s by round (s1, s2, ... in the order given; bb for bbolt) and medians.
out=$1; rounds=$2; wl=$3; shift 3
mkdir -p $out; cd $out
CACHED="--dataset sysbench --table-size 250000 --cache 128MiB --mem-limit 224MiB"
for r in $(seq 1 $rounds); do
  i=0
  for d in "$@"; do
    i=$((i+1))
    $d/strata bench --strata-bin $d/strata-bench-child --peers-bin $d/strata-bench-peers --engines strata $CACHED --warmup 3s --duration ${DUR:-10s} --workload $wl --json s$i-$r.json > s$i-$r.txt 2>&1
  done
  d=$1; $d/strata bench --strata-bin $d/strata-bench-child --peers-bin $d/strata-bench-peers --engines bbolt $CACHED --warmup 3s --duration ${DUR:-10s} --workload $wl --json bb-$r.json > bb-$r.txt 2>&1
done
python3 - <<'PY'
import json,glob,statistics,collections
v=collections.defaultdict(list)
for f in sorted(glob.glob('*.json'), key=lambda f: (f.split('-')[0], int(f.split('-')[1].split('.')[0]))):  # by round
    d=json.load(open(f)); k=f.split('-')[0]
    v[k].append(round(d['results'][0]['txn_per_sec']))
for k in sorted(v): print(k, v[k], 'median', statistics.median(v[k]))
PY
