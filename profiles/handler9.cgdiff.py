import sys,re,subprocess
def load(f):
    out=subprocess.run(['cg_annotate','--show-percs=no',f] if False else ['cg_annotate',f],capture_output=True,text=True).stdout
    d={}
    for line in out.splitlines():
        m=re.match(r'\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*?):(\S+)\s*$',line)
        if m:
            d[m.group(3)]=d.get(m.group(3),0)+int(m.group(1).replace(',',''))
    return d
a=load(sys.argv[1]); b=load(sys.argv[2]); n=float(sys.argv[3])
rows=sorted(((b.get(k,0)-a.get(k,0))/n,k) for k in set(a)|set(b))
rows.reverse()
for v,k in rows[:int(sys.argv[4]) if len(sys.argv)>4 else 45]:
    if v>=1: print("%8.1f %s"%(v,k))
