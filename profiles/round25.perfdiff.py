# round25.perfdiff.py A REQS_A B REQS_B [MIN]: per-symbol server CPU µs per request, A minus B, from two
# `perf record -e cpu-clock -F 4999` files (round25.perf.txt); rows below MIN µs (0.03) are left out.
import subprocess,sys,re,collections
def load(f,reqs):
    out=subprocess.run(['perf','report','-i',f,'--no-children','--sort','sym','--stdio','-n'],capture_output=True,text=True).stdout
    d=collections.Counter()
    for l in out.splitlines():
        m=re.match(r'\s*([\d.]+)%\s+(\d+)\s+\[(.)\]\s+(.*)',l)
        if m: d[m.group(3)+' '+m.group(4).strip()]+=int(m.group(2))/4999/reqs*1e6
    return d
a=load(sys.argv[1],float(sys.argv[2])); b=load(sys.argv[3],float(sys.argv[4]))
rows=sorted(((a[k]-b[k]),k) for k in set(a)|set(b))
lim=float(sys.argv[5]) if len(sys.argv)>5 else 0.03
for v,k in reversed(rows):
    if abs(v)>=lim: print('%7.3f  %6.3f %6.3f  %s'%(v,a[k],b[k],k[:100]))
