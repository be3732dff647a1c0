import sys,re,statistics,collections
# ratio.py OLD NEW [metric]: per benchmark, the medians of old and new and the median of the
# per-round new/old ratios (files from engine5.ab.sh: round i of old pairs with round i of new)
def load(p,metric):
    d=collections.defaultdict(list)
    for l in open(p):
        if not l.startswith('Benchmark'): continue
        f=l.split(); name=f[0]
        for i in range(2,len(f)-1):
            if f[i+1]==metric: d[name].append(float(f[i]))
    return d
metric=sys.argv[3] if len(sys.argv)>3 else 'ns/op'
o=load(sys.argv[1],metric); n=load(sys.argv[2],metric)
for k in o:
    if k not in n: continue
    rs=[b/a for a,b in zip(o[k],n[k]) if a]
    if not rs: continue
    print(f"{k} {metric}: old med {statistics.median(o[k]):.1f} new med {statistics.median(n[k]):.1f}  per-round new/old median {statistics.median(rs):.3f} ({sum(r<1 for r in rs)}/{len(rs)} rounds below 1)")
