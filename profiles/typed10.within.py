import sys,statistics,collections
# typed10.within.py AB_FILE: per round and per binary (base/new), StreamEcho typed / progressToken cpu-ns/msg,
# then the per-round ratio of that quotient new/base (the typed path's cost over the untyped one's, so that a
# layout or load effect on the whole binary cancels).
rows=collections.defaultdict(dict); r=0
for l in open(sys.argv[1]):
    f=l.split()
    if not f: continue
    if f[0]=='round': r=int(f[1]); continue
    lab,name=f[0],f[1]
    if 'cpu-ns/msg' not in f: continue
    v=float(f[f.index('cpu-ns/msg')-1])
    key='typed' if 'Inline/typed' in name else 'pt' if 'progressToken' in name else None
    if key: rows[r][(lab,key)]=v
q={lab:[rows[r][(lab,'typed')]/rows[r][(lab,'pt')] for r in sorted(rows)] for lab in ('base','new')}
rat=[n/b for n,b in zip(q['new'],q['base'])]
for lab in q: print("%s typed/progressToken per round: median %.3f  %s"%(lab,statistics.median(q[lab])," ".join("%.3f"%x for x in q[lab])))
print("new/base of that: median %.3f, %d/%d below 1: %s"%(statistics.median(rat),sum(x<1 for x in rat),len(rat)," ".join("%.3f"%x for x in rat)))
