# http16.cgdiff.py TAG_A ROW_A TAG_B ROW_B [MIN]: per-request self cost by function, B minus A,
# from callgrind runs of 20,000 and 60,000 requests kept as /tmp/h16cg{TAG}.{ROW}.{N} (profiles/http16.cg.sh).
# Names are normalised: the binary suffix and the 'N recursion marks callgrind adds are dropped, so
# that a function counts once however callgrind split it.
import subprocess,sys,re
def load(f):
    out=subprocess.run(['callgrind_annotate','--auto=no','--threshold=100',f],capture_output=True,text=True).stdout
    d={}
    for l in out.splitlines():
        m=re.match(r'\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)',l)
        if m:
            v=int(m.group(1).replace(',',''));name=m.group(2)
            name=re.sub(r' \[.*\]$','',name)
            if ':' in name.split(' ')[0]: name=re.sub(r'^\S+?:','',name)
            name=re.sub(r"'\d+$",'',name)
            d[name]=d.get(name,0)+v
    return d
# usage: diff.py tagA tagB [lim]  -> per-request (B mcp) - (A ...) ; tag files /tmp/h16cg{tag}.{row}.{n}
def per(tag,row):
    a=load('/tmp/h16cg%s.%s.20000'%(tag,row)); b=load('/tmp/h16cg%s.%s.60000'%(tag,row))
    return {k:(b.get(k,0)-a.get(k,0))/40000 for k in set(a)|set(b)}
x=per(sys.argv[1],sys.argv[2]); y=per(sys.argv[3],sys.argv[4]); lim=float(sys.argv[5]) if len(sys.argv)>5 else 15
rows=sorted(((y.get(k,0)-x.get(k,0),k) for k in set(x)|set(y)),reverse=True)
for v,k in rows:
    if abs(v)>=lim: print('%8.1f  %s'%(v,k[:140]))
