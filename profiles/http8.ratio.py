# http8.ratio.py OUT: engine7.ratio.py's per-round new/base medians, then per round and binary the
# ratio mcpwire/rawfast of cpu-ns/op (rawfast's handler run by the same binary in the same round).
import sys,statistics
rows={}; rnd=0; loads=[]
for line in open(sys.argv[1]):
    f=line.split()
    if not f: continue
    if f[0]=='round': rnd=int(f[1]); loads.append(float(f[2])); continue
    lab,name=f[0],f[1].split('-')[0]
    val=float(f[f.index('cpu-ns/op')-1])
    rows.setdefault(name,{}).setdefault(rnd,{})[lab]=val
print("load average (1 min) at rounds: %s" % " ".join("%.2f"%l for l in loads))
print("%-32s %9s %9s %7s %6s  %s"%("cpu-ns/op","base med","new med","ratio","<1","per-round new/base"))
for name,rs in rows.items():
    rat=[r['new']/r['base'] for r in rs.values() if 'new' in r and 'base' in r]
    b=statistics.median([r['base'] for r in rs.values()]); n=statistics.median([r['new'] for r in rs.values()])
    print("%-32s %9.1f %9.1f %7.3f %3d/%-2d  %s"%(name,b,n,statistics.median(rat),sum(1 for x in rat if x<1),len(rat)," ".join("%.3f"%x for x in rat)))
m,r=rows['BenchmarkWrkEcho/mcpwire'],rows['BenchmarkWrkEcho/rawfast']
for lab in ('base','new'):
    q=[m[i][lab]/r[i][lab] for i in m if i in r]
    print("mcpwire/rawfast %-4s median %.3f  per round %s"%(lab,statistics.median(q)," ".join("%.3f"%x for x in q)))
