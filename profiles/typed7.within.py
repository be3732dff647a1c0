import sys,re,statistics,collections
# within.py FILE A B [metric]: per round, A/B inside one binary's output (rounds in file order)
def load(p,metric):
    d=collections.defaultdict(list)
    for l in open(p):
        if not l.startswith('Benchmark'): continue
        f=l.split(); name=re.sub(r'-\d+$','',f[0])
        for i in range(2,len(f)-1):
            if f[i+1]==metric: d[name].append(float(f[i]))
    return d
p,a,b=sys.argv[1:4]; metric=sys.argv[4] if len(sys.argv)>4 else 'ns/op'
d=load(p,metric); rs=[x/y for x,y in zip(d[a],d[b])]
print(f"{p}: {a}/{b} per round median {statistics.median(rs):.3f} (min {min(rs):.3f}, max {max(rs):.3f}, {len(rs)} rounds)")
