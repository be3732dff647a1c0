import sys,re,statistics
rows={}  # bench -> round -> {label: value}
rnd=0; loads=[]
for line in open(sys.argv[1]):
    f=line.split()
    if not f: continue
    if f[0]=='round': rnd=int(f[1]); loads.append(float(f[2])); continue
    lab,name=f[0],f[1]
    # metric: cpu-ns/op or cpu-ns/msg if present, else ns/op
    val=None
    for i,t in enumerate(f):
        if t in('cpu-ns/op','cpu-ns/msg'): val=float(f[i-1]); unit=t
    if val is None:
        i=f.index('ns/op'); val=float(f[i-1]); unit='ns/op'
    rows.setdefault((name,unit),{}).setdefault(rnd,{})[lab]=val
print("load average (1 min) at rounds: %s" % " ".join("%.2f"%l for l in loads))
print("%-52s %-10s %9s %9s %7s %6s  %s"%("benchmark","metric","base med","new med","ratio","<1","per-round new/base"))
for (name,unit),rs in rows.items():
    rat=[r['new']/r['base'] for r in rs.values() if 'new' in r and 'base' in r]
    b=statistics.median([r['base'] for r in rs.values() if 'base' in r]); n=statistics.median([r['new'] for r in rs.values() if 'new' in r])
    print("%-52s %-10s %9.1f %9.1f %7.3f %3d/%-2d  %s"%(name,unit,b,n,statistics.median(rat),sum(1 for x in rat if x<1),len(rat)," ".join("%.3f"%x for x in rat)))
