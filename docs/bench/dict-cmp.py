#!/usr/bin/env python3
# Usage: dict-cmp.py on1.json,on2.json off1.json,off2.json: medians of Strata with the dictionary
# against without, per data size and page size, from strata bench sweep --json files.
import json,sys,statistics
def load(files):
    out={}
    for f in files:
        try: d=json.load(open(f))
        except Exception: continue
        for r in d['runs']:
            res=r['result']; m=res.get('metrics') or {}
            key=(r['engine'], r.get('page_size') or 0, r['value'])
            out.setdefault(key,[]).append((res['txn_per_sec'], m.get('store.compression_ratio',0), m.get('go.gc_cpu_share',0), m.get('go.heap_objects_bytes',0)/2**20, res.get('cpu_per_txn_us',0), m.get('pool.hit_ratio_u',0), m.get('pool.hit_ratio_c',0), m.get('pool.miss_ratio',0), m.get('pool.share',0)))
    return out
A=load(sys.argv[1].split(',')); B=load(sys.argv[2].split(','))
vals=sorted(set(k[2] for k in A), key=lambda v: float(v[:-1]))
print("| data/mem | page | dict on: txn/s (runs) | r | GC | off: txn/s (runs) | r | GC | on/off | bbolt on-run | bbolt off-run |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for v in vals:
    bb_a=[x[0] for x in A.get(('bbolt',0,v),[])]; bb_b=[x[0] for x in B.get(('bbolt',0,v),[])]
    for ps in (4096,16384):
        a=A.get(('strata',ps,v),[]); b=B.get(('strata',ps,v),[])
        if not a or not b: continue
        ma=statistics.median(x[0] for x in a); mb=statistics.median(x[0] for x in b)
        f=lambda l: ' '.join('%d'%x[0] for x in l)
        print(f"| {v} | {ps//1024} KiB | {ma:,.0f} ({f(a)}) | {statistics.median(x[1] for x in a):.2f} | {statistics.median(x[2] for x in a):.2f} | {mb:,.0f} ({f(b)}) | {statistics.median(x[1] for x in b):.2f} | {statistics.median(x[2] for x in b):.2f} | **{ma/mb:.2f}×** | {' '.join('%d'%x for x in bb_a)} | {' '.join('%d'%x for x in bb_b)} |")
