import json, sys
# Markdown tables and issue 9's goals from `strata bench sweep --param table-size` JSON files.
def fmt(x): return f"{x:,.0f}"
tot = {'peer': [0,0], 'fit': [0,0], 'cached': [0,0], 'auto': [0,0]}
worst_peer = []; worst_auto = []
for f in sys.argv[1:]:
    d = json.load(open(f))
    ds = 'events' if 'events' in f else 'sysbench'
    fits = {'sysbench': (1.0, 1.8), 'events': (1.0, 4.0)}[ds]
    pts = {}
    for run in d['runs']:
        r = run.get('result') or {}
        if not r or not r.get('txn_per_sec'): continue
        pts.setdefault(run['value'], []).append((run, r))
    g = {'peer': [0,0], 'fit': [0,0], 'cached': [0,0], 'auto': [0,0]}
    print(f"\n**{f}**\n")
    print("| data/mem | page | Strata auto | best peer | vs best peer | vs bbolt | best fixed R | auto vs best fixed | auto R, hits U/C/miss | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for v, runs in pts.items():
        x = float(v.rstrip('x'))
        peers = [(r['txn_per_sec'], run['engine']) for run, r in runs if run['engine'] != 'strata']
        bp = max(peers) if peers else (0, '-')
        bb = [t for t, e in peers if e == 'bbolt']
        for ps in sorted({run['page_size'] for run, r in runs if run['engine'] == 'strata'}):
            st = [(run, r) for run, r in runs if run['engine'] == 'strata' and run['page_size'] == ps]
            auto = [(run, r) for run, r in st if run['share'] < 0]
            fixed = [(r['txn_per_sec'], run['share']) for run, r in st if run['share'] >= 0]
            if not auto: continue
            run, r = auto[0]; a = r['txn_per_sec']; m = r['metrics']
            bf = max(fixed) if fixed else (0, 0)
            vp = a / bp[0] if bp[0] else float('nan')
            vb = a / bb[0] if bb else float('nan')
            vf = a / bf[0] if bf[0] else float('nan')
            pk = r['peak_rss_bytes'] / 2**20
            print(f"| {v} | {ps//1024} KiB | {fmt(a)} | {bp[1]} {fmt(bp[0])} | {vp:.2f}× | {vb:.2f}× | {fmt(bf[0])} (R={bf[1]:g}) | {vf:.2f}× | {m['pool.share_r']:.2f}, {m['pool.hit_ratio_uncompressed']:.3f}/{m['pool.hit_ratio_compressed']:.3f}/{m['pool.miss_ratio']:.3f} | {pk:.1f} MiB |")
            g['peer'][1] += 1; g['peer'][0] += vp >= 1
            if fits[0] <= x <= fits[1]: g['fit'][1] += 1; g['fit'][0] += vp >= 1.5
            if x <= 0.5 and bb: g['cached'][1] += 1; g['cached'][0] += vb >= 1
            g['auto'][1] += 1; g['auto'][0] += vf >= 0.95
            worst_peer.append((vp, f, v, ps)); worst_auto.append((vf, f, v, ps))
    print(f"\ngoals: best peer {g['peer'][0]}/{g['peer'][1]}, 1.5x fits {g['fit'][0]}/{g['fit'][1]}, cached>=bbolt {g['cached'][0]}/{g['cached'][1]}, auto within 5% {g['auto'][0]}/{g['auto'][1]}")
    for k in tot: tot[k][0] += g[k][0]; tot[k][1] += g[k][1]
print("\nTOTAL", tot)
print("worst vs peer", sorted(worst_peer)[:5])
print("worst auto vs fixed", sorted(worst_auto)[:5])
