# legacy16.cgdiff.py L10000 L30000 M10000 M30000 N MIN: per-call instructions of each function,
# legacy row minus modern row, from four callgrind outputs (the two row's runs at two -benchtime
# counts N apart); rows under MIN left out. A function's recursive ('2) and file-less rows merge.
import re, subprocess, sys

def load(f):
    out = subprocess.run(['callgrind_annotate', '--auto=no', '--threshold=100', f], capture_output=True, text=True).stdout
    d = {}
    for l in out.splitlines():
        m = re.match(r'\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)', l)
        if not m:
            continue
        name = m.group(2)
        if ':' in name.split(' ')[0]:
            name = re.sub(r'^\S+:', '', name)
        name = re.sub(r"'\d+$", '', re.sub(r'\s*\[.*\]$', '', name))
        d[name] = d.get(name, 0) + int(m.group(1).replace(',', ''))
    return d

L1, L2, M1, M2 = [load(f) for f in sys.argv[1:5]]
n, lim = float(sys.argv[5]), float(sys.argv[6])
per = lambda a, b, k: (b.get(k, 0) - a.get(k, 0)) / n
rows = sorted(((per(L1, L2, k) - per(M1, M2, k), per(L1, L2, k), per(M1, M2, k), k) for k in set(L1) | set(L2) | set(M1) | set(M2)), reverse=True)
for d, l, m, k in rows:
    if abs(d) >= lim:
        print('%8.1f %8.1f %8.1f  %s' % (d, l, m, k[:120]))
