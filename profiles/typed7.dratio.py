import sys,re,statistics,collections
# dratio.py OLD NEW A B [metric]: per round, (A new/old) / (B new/old): A's change against the control B's drift
def load(p,metric):
    d=collections.defaultdict(list)
    for l in open(p):
        if not l.startswith('Benchmark'): continue
        f=l.split(); name=re.sub(r'-\d+$','',f[0])
        for i in range(2,len(f)-1):
            if f[i+1]==metric: d[name].append(float(f[i]))
    return d
o,n,a,b=sys.argv[1:5]; metric=sys.argv[5] if len(sys.argv)>5 else 'ns/op'
O=load(o,metric); N=load(n,metric)
rs=[(na/oa)/(nb/ob) for oa,na,ob,nb in zip(O[a],N[a],O[b],N[b])]
print(f"{a} new/old over {b} new/old ({metric}), per round median {statistics.median(rs):.3f}, {sum(r<1 for r in rs)}/{len(rs)} below 1")
