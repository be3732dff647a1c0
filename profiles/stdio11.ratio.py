import sys, re, statistics as st, collections
base = sys.argv[2]; rows = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    m = re.match(r"round (\d+) (\S+) req,rps=(\d+) ([\d.]+) task-clock=([\d.]+) context-switches=(\d+) syscalls:sys_enter_nanosleep=(\d+)", l)
    if not m: continue
    r, b, req, rps, tc, cs, ns = m.groups(); req = float(req)
    rows[int(r)][b] = dict(cpu=float(tc)*1e3/req, rps=float(rps), cs=float(cs)/req*1e3, ns=float(ns)/req*1e3)
bins = sorted({b for r in rows.values() for b in r})
for b in bins:
    vals = [rows[r][b] for r in rows if b in rows[r]]
    line = f"{b:6s} median cpu {st.median(v['cpu'] for v in vals):.3f} us/req  rps {st.median(v['rps'] for v in vals):.0f}  cs/kreq {st.median(v['cs'] for v in vals):.2f}  nanosleep/kreq {st.median(v['ns'] for v in vals):.2f}"
    if b != base:
        cr = [rows[r][b]['cpu']/rows[r][base]['cpu'] for r in rows if b in rows[r] and base in rows[r]]
        rr = [rows[r][b]['rps']/rows[r][base]['rps'] for r in rows if b in rows[r] and base in rows[r]]
        line += f"  | vs {base}: cpu ratio median {st.median(cr):.3f} (per round {' '.join('%.2f'%x for x in cr)}; {sum(x<1 for x in cr)}/{len(cr)} below 1)  rps ratio median {st.median(rr):.3f}"
    print(line)
