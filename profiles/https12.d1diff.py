import collections,subprocess,re,sys
pre=sys.argv[1]
d=collections.defaultdict(lambda:[0,0])
for i,r in enumerate(['mcpwire','rawfast']):
    out=subprocess.run(['cg_annotate','--threshold=0','--show=D1mr,D1mw','--sort=D1mr,D1mw','%s.%s.diff'%(pre,r)],capture_output=True,text=True).stdout
    started=False
    for l in out.splitlines():
        if 'file:function' in l: started=True; continue
        if not started: continue
        if l.startswith('---'): continue
        if not l.strip(): break
        m=re.match(r'\s*(-?[\d,]+|\.)\s+(?:\([^)]*\)\s+)?(-?[\d,]+|\.)\s+(?:\([^)]*\)\s+)?(.*)$', l)
        if not m: continue
        a=int(m.group(1).replace(',','')) if m.group(1)!='.' else 0
        b=int(m.group(2).replace(',','')) if m.group(2)!='.' else 0
        fn=m.group(3).strip()
        fn=fn.split(':',1)[1] if ':' in fn else fn
        d[fn][i]+=a+b
rows=sorted(d.items(), key=lambda kv: -(kv[1][0]-kv[1][1]))
print("D1 misses (rd+wr) per request: cg_diff of 5000x minus 1000x runs (4000 requests), %s; mcpwire rawfast diff function"%pre)
for fn,(m,r) in rows[:25]: print("%8.1f %8.1f %+8.1f  %s"%(m/4000,r/4000,(m-r)/4000,fn))
print("...")
for fn,(m,r) in rows[-5:]: print("%8.1f %8.1f %+8.1f  %s"%(m/4000,r/4000,(m-r)/4000,fn))
print("total %.1f %.1f"%(sum(v[0] for v in d.values())/4000, sum(v[1] for v in d.values())/4000))
