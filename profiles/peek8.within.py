# peek8.within.py FILE: per round, within each binary, Peek*/SonicGet3Fields ns/op (the figure: <= 0.5), medians
import sys, re, statistics
rows = {}  # (label, bench) -> {round: ns}
rnd = 0
for line in open(sys.argv[1]):
    f = line.split()
    if not f: continue
    if f[0] == 'round': rnd = int(f[1]); continue
    lab, name = f[0], re.sub(r'-\d+$', '', f[1])
    rows.setdefault((lab, name), {})[rnd] = float(f[f.index('ns/op') - 1])
for lab in ('base', 'new'):
    sonic = rows.get((lab, 'BenchmarkSonicGet3Fields'), {})
    for (l, name), rs in sorted(rows.items()):
        if l != lab or 'Sonic' in name: continue
        r = [rs[k] / sonic[k] for k in rs if k in sonic]
        if r:
            print("%-5s %-28s / SonicGet3Fields: median %.3f (min %.3f, max %.3f, %d rounds)" % (lab, name, statistics.median(r), min(r), max(r), len(r)))
