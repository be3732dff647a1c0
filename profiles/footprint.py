#!/usr/bin/env python3
"""footprint.py MARKER_HEX FIRST NMFILE: reads valgrind lackey --trace-mem=yes output on stdin and
takes the window between the FIRST-th and (FIRST+1)-th fetch of MARKER (a function entered once a
request). Prints the instructions executed in it, the distinct 64-byte code lines and data lines
it touched, and the code lines per package and per function (NMFILE: go tool nm -size -sort
address of the same binary). Round 21 (profiles/round21.footprint.txt)."""
import bisect, collections, sys

marker, first, nmfile = int(sys.argv[1], 16), int(sys.argv[2]), sys.argv[3]
seen, ins, il, dl = 0, 0, set(), set()
for line in sys.stdin:
    if line[0] == 'I':
        a = int(line[3:line.index(',')], 16)
        if a == marker:
            seen += 1
            if seen > first:
                break
        if seen == first:
            il.add(a >> 6)
            ins += 1
    elif seen == first and line[0] == ' ':
        dl.add(int(line[3:line.index(',')], 16) >> 6)
if seen <= first:
    sys.exit("footprint.py: the marker was fetched %d times, fewer than %d" % (seen, first + 1))

syms = []
for l in open(nmfile):
    p = l.split(None, 3)
    if len(p) == 4 and p[2] in 'Tt':
        syms.append((int(p[0], 16), p[3].strip()))
syms.sort()
starts = [s[0] for s in syms]
per, pkg = collections.Counter(), collections.Counter()
for line in il:
    i = bisect.bisect_right(starts, (line << 6) + 63) - 1  # the last function starting on or before the line's end
    name = syms[i][1] if i >= 0 else '?'
    per[name] += 1
    base = name.split('[')[0]
    dot = base.find('.', base.rfind('/') + 1)  # the package path ends at the first dot after its last slash
    pkg[base[:dot] if dot > 0 else base] += 1
print("instructions %d  code lines %d  data lines %d" % (ins, len(il), len(dl)))
print("\ncode lines by package")
for k, v in pkg.most_common(16):
    print("%5d  %s" % (v, k))
print("\ncode lines by function")
for k, v in per.most_common(40):
    print("%5d  %s" % (v, k))
