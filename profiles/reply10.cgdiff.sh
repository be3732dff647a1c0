#!/bin/bash
# cgdiff.sh OLDBIN NEWBIN BENCH N: per-function Ir difference (new-old)/N from cachegrind runs of N iterations
export GODEBUG=cpu.rdtscp=off GOMAXPROCS=1 GOGC=off
for x in "1:$1" "2:$2"; do i=${x%%:*}; bin=${x#*:}
valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/tmp/r10/cg.$i.out $bin -test.run XXX -test.bench "$3" -test.benchtime ${4}x >/dev/null 2>&1
cg_annotate --threshold=0.01 /tmp/r10/cg.$i.out 2>/dev/null | grep -E '^ *[0-9,]+ \( *[0-9.]+%\) ' | sed -E 's#^ *([0-9,]+) \( *[0-9.]+%\) +#\1 #; s#/tmp/r10/[a-z0-9]+/##; s#/work/wt-reply10/##' > /tmp/r10/fn.$i.txt
done
python3 - "$4" <<'PY'
import sys
N=int(sys.argv[1])
def load(f):
    d={}
    for l in open(f):
        p=l.rstrip('\n').split(' ',1)
        if len(p)<2: continue
        d[p[1]]=d.get(p[1],0)+int(p[0].replace(',',''))
    return d
a=load('/tmp/r10/fn.1.txt'); b=load('/tmp/r10/fn.2.txt')
diffs=sorted(((b.get(k,0)-a.get(k,0)),k) for k in set(a)|set(b))
for d,k in diffs:
    if abs(d)/N>=1: print("%8.1f %s"%(d/N,k[-110:]))
print("total %.1f"%((sum(b.values())-sum(a.values()))/N))
PY
