import json, statistics, sys
# Auto R against every fixed R, per data size, from `strata bench sweep --param table-size
# --strata-r auto,0,...` JSON files (docs/bench/autor24.sh). With --repeat, the median run of each.
tot = [0, 0]
for f in sys.argv[1:]:
    d = json.load(open(f))
    pts = {}
    for run in d['runs']:
        r = run.get('result') or {}
        if run['engine'] != 'strata' or not r.get('txn_per_sec'):
            continue
        pts.setdefault(run['value'], {}).setdefault(run['share'], []).append(r)
    shares = sorted({s for p in pts.values() for s in p if s >= 0})
    print(f"\n**{f}**\n")
    print("| data/mem | auto (R at the end) | " + " | ".join(f"R {s:g}" for s in shares) + " | best fixed | auto / best |")
    print("|---|---|" + "---|" * len(shares) + "---|---|")
    for v, by in pts.items():
        med = {s: statistics.median(r['txn_per_sec'] for r in rs) for s, rs in by.items()}
        if -1 not in med:
            continue
        autor = statistics.median(r['metrics']['pool.share_r'] for r in by[-1])
        best = max((med[s], s) for s in shares if s in med)
        ratio = med[-1] / best[0]
        tot[1] += 1
        tot[0] += ratio >= 0.95
        cells = " | ".join(f"{med[s]:,.0f}" if s in med else "-" for s in shares)
        mark = "" if ratio >= 0.95 else "**"
        print(f"| {v} | {med[-1]:,.0f} ({autor:.2f}) | {cells} | R {best[1]:g} | {mark}{ratio:.2f}×{mark} |")
print(f"\nauto within 5% of the best fixed R: {tot[0]} of {tot[1]}")
