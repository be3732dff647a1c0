# round25.perfgroup.py DATA REQUESTS [DATA REQUESTS...]: server CPU µs per request by group (kernel, fasthttp,
# runtime, our packages) from a `perf record -e cpu-clock -F 4999` file and the requests served while it sampled.
import subprocess,sys,re,collections
def grp(f):
    out=subprocess.run(['perf','report','-i',f,'--no-children','--sort','dso,sym','--stdio','-n'],capture_output=True,text=True).stdout
    g=collections.Counter(); tot=0
    for l in out.splitlines():
        m=re.match(r'\s*([\d.]+)%\s+(\d+)\s+(\S+)\s+\[(.)\]\s+(.*)',l)
        if not m: continue
        n=int(m.group(2)); dso=m.group(3); sym=m.group(5).strip(); tot+=n
        if m.group(4)=='k': k='kernel'
        elif 'vdso' in dso: k='vdso'
        elif sym.startswith('github.com/valyala/fasthttp'): k='fasthttp'
        elif sym.startswith('github.com/mcpwire/mcpwire/engine'): k='mcpwire/engine'
        elif sym.startswith('github.com/mcpwire/mcpwire/codec'): k='mcpwire/codec'
        elif sym.startswith('github.com/mcpwire'): k='mcpwire/other'
        elif sym.startswith('runtime') or sym.startswith('internal/runtime'): k='runtime'
        elif sym.startswith('sync'): k='sync'
        else: k='other:'+sym[:40]
        g[k]+=n
    return g,tot
# per request µs = samples/4999 s / requests
for f,reqs in zip(sys.argv[1::2], sys.argv[2::2]):
    g,tot=grp(f)
    print(f, 'total µs/req %.2f'%(tot/4999/float(reqs)*1e6))
    for k,v in g.most_common(14): print('   %-28s %.3f'%(k, v/4999/float(reqs)*1e6))
