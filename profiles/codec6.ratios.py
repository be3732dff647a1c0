import sys,re,statistics as st
f=sys.argv[1]
d={}
for l in open(f):
    m=re.match(r'^(\d+) (old|new) (Benchmark\S+)\s+\d+\s+([\d.]+) ns/op',l)
    if m: d.setdefault(m.group(3),{}).setdefault(m.group(2),{})[int(m.group(1))]=float(m.group(4))
print("per-round new/old (ns/op), medians over rounds; rounds with new < old")
for k,v in d.items():
    if 'old' not in v or 'new' not in v: continue
    rs=[v['new'][r]/v['old'][r] for r in sorted(v['old']) if r in v['new']]
    print(f"  {k:38s} old median {st.median(v['old'].values()):8.1f}  new median {st.median(v['new'].values()):8.1f}  new/old per round: median {st.median(rs):.3f}  min {min(rs):.3f}  max {max(rs):.3f}  ({sum(x<1 for x in rs)}/{len(rs)} below 1)")
extra=sys.argv[2:] 
for spec in extra:
    a,b=spec.split('/')
    for w in ('old','new'):
        A=[k for k in d if a in k][0]; B=[k for k in d if b in k][0]
        rs=[d[A][w][r]/d[B][w][r] for r in d[A][w] if r in d[B][w]]
        print(f"  {w}: {A}/{B} per round median {st.median(rs):.3f}")
