# legacy16.cgdiff.py L10000 L30000 M10000 M30000 20000 MIN: per-call instructions of each function,
# legacy row minus modern row, from four callgrind outputs (10000x and 30000x of each row).
import sys,re
exec(open('/work/notes/cgdiff.py').read().split('a=load')[0])
def norm(d):
    o={}
    for k,v in d.items():
        k=re.sub(r"\s*\[.*\]$","",k); k=re.sub(r"'\d+$","",k)
        o[k]=o.get(k,0)+v
    return o
L1,L2,M1,M2=[norm(load(f)) for f in sys.argv[1:5]]
n=float(sys.argv[5])
keys=set(L1)|set(L2)|set(M1)|set(M2)
def per(a,b,k): return (b.get(k,0)-a.get(k,0))/n
rows=sorted(((per(L1,L2,k)-per(M1,M2,k),per(L1,L2,k),per(M1,M2,k),k) for k in keys),reverse=True)
for d,l,m,k in rows:
    if abs(d)>=float(sys.argv[6]): print('%8.1f %8.1f %8.1f  %s'%(d,l,m,k[:120]))
