import subprocess,sys,re
# per-message ns of self samples by symbol, for each profile: samples*0.5ms / (req*3/4)
res={}
for n in sys.argv[1:]:
    req=int(open(n+'.req').read())*3/4
    out=subprocess.run(['perf','report','-i',n+'.data','--no-children','--sort','sym','--stdio','-g','none','-F','sample,sym'],capture_output=True,text=True).stdout
    d={}
    for l in out.splitlines():
        m=re.match(r'\s*(\d+)\s+\[(.)\]\s+(.*)$',l)
        if m: d[('k:' if m.group(2)=='k' else '')+m.group(3).strip()]=int(m.group(1))*0.5e6/req
    res[n]=d
keys=set().union(*[set(d) for d in res.values()])
print('%-70s'%'ns/msg', ' '.join('%10s'%n for n in sys.argv[1:]))
tot={n:sum(d.values()) for n,d in res.items()}
print('%-70s'%'TOTAL',' '.join('%10.1f'%tot[n] for n in sys.argv[1:]))
for grp,pat in [('kernel',r'^k:'),('runtime',r'^runtime\.|^internal/runtime|^syscall|^golang.org/x/sys|^gcWrite|^aeshash|^memeqbody|^indexbyte|^countbody|^cmpbody'),('gnet',r'gnet'),('mcpwire',r'mcpwire')]:
    print('%-70s'%('group '+grp),' '.join('%10.1f'%sum(v for k,v in res[n].items() if re.search(pat,k)) for n in sys.argv[1:]))
rows=sorted(keys,key=lambda k:-max(res[n].get(k,0) for n in res))
for k in rows[:60]:
    print('%-70s'%k[:70],' '.join('%10.1f'%res[n].get(k,0) for n in sys.argv[1:]))
