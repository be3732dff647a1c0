#!/usr/bin/env python3
"""round24.stages.py FILE: medians of round24.stages.sh's per-round ratios (to raw fasthttp and to
main in the same round), req/s and server CPU per request."""
import collections, statistics, sys

rows = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    p = l.split()
    if len(p) == 4 and p[0].isdigit():
        rows[int(p[0])][p[1]] = (int(p[2]), float(p[3]))
names = []
for r in rows.values():
    names += [k for k in r if k not in names]
for k in names:
    rs = [r for r in rows.values() if k in r]
    raw = [r[k][0] / r['raw'][0] for r in rs if 'raw' in r]
    main = [r[k][0] / r['main'][0] for r in rs if 'main' in r]
    print('%-9s n=%d  ÷raw %.3f  ÷main %s  req/s %d  server CPU %.2f us/req' % (
        k, len(rs), statistics.median(raw), '%.3f' % statistics.median(main) if main else '-',
        statistics.median(r[k][0] for r in rs), statistics.median(r[k][1] for r in rs)))
