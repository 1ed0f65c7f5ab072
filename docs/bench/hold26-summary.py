#!/usr/bin/env python3
# Summarise hold26.sh / hold26b.sh: per build and read latency, auto at % of R 0 (within 5%: >= 95), the
# end R, image hits in the measured window, and the frames trials' verdicts from the trace ((c): confirming).
import glob,re,json,collections,statistics
rows=collections.defaultdict(list)
for f in sorted(glob.glob('h-*.txt')):
    _,lat,b,rnd=f[:-4].split('-')
    t=open(f).read()
    m=re.search(r'auto at ([\d.]+)% of it',t)
    mh=re.search(r'\| skewed \| auto \(→([\d.]+)\) \| (\d+) \| – \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)',t)
    # trace: count trial verdicts
    log=f'out-{f[:-4]}/log.json'
    verdicts=[]
    try:
        for line in open(log):
            d=json.loads(line)
            if d.get('msg')=='bufferpool: trial ends':
                verdicts.append((d.get('arm'),d.get('verdict'),d.get('confirming')))
    except Exception as e: pass
    rows[(lat,b)].append((int(rnd),float(m.group(1)) if m else None, mh.group(1) if mh else '?', mh.group(4) if mh else '?', verdicts))
for k,v in sorted(rows.items()):
    v.sort()
    pcts=[x[1] for x in v]
    print(k, 'within5:',sum(1 for p in pcts if p>=95),'of',len(pcts),'median %.1f'%statistics.median(pcts))
    for x in v: print('   ',x[0],x[1],'R→',x[2],'Hc',x[3],[f"{a}:{vv}{'(c)' if c else ''}" for a,vv,c in x[4]])
