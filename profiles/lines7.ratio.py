import sys,re,statistics,collections
pre=sys.argv[1]; metric=sys.argv[2] if len(sys.argv)>2 else 'ns/op'
def load(w):
    d=collections.defaultdict(dict)
    for line in open(f"{pre}.{w}.txt"):
        f=line.split(); r=f[0]; name=f[1]
        for i,x in enumerate(f):
            if x==metric: d[name][r]=float(f[i-1])
    return d
o,n=load('old'),load('new')
for name in o:
    rs=[n[name][r]/o[name][r] for r in o[name] if r in n[name]]
    print(f"{name:55s} {metric} new/old per round: median {statistics.median(rs):.3f}, {sum(x<1 for x in rs)}/{len(rs)} rounds below 1; old median {statistics.median(o[name].values()):.1f}, new median {statistics.median(n[name].values()):.1f}")
