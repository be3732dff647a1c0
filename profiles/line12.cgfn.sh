#!/bin/bash
# cgfn.sh BIN BENCH N1 N2 OUT: per-function instructions per op = (Ir(N2)-Ir(N1))/(N2-N1), from cachegrind of two runs
export GODEBUG=cpu.rdtscp=off GOMAXPROCS=1 GOGC=off
bin=$1 bench=$2 n1=$3 n2=$4 out=$5
for n in $n1 $n2; do
  for t in 1 2 3 4 5; do
    o=$(valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=$out.$n.cg $bin -test.run XXX -test.bench "$bench" -test.benchtime ${n}x -test.count 1 2>&1)
    echo "$o" | grep -q '^PASS' && break
  done
  cg_annotate --auto=no --threshold=0 $out.$n.cg 2>/dev/null | awk '/^ *[0-9,]+ .*[:]/ || /^ *[0-9,]+ \(/ {print}' > $out.$n.fn
done
python3 - $out.$n1.fn $out.$n2.fn $n1 $n2 <<'PY'
import sys,re
def load(f):
    d={}
    for l in open(f):
        m=re.match(r'\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$',l) or re.match(r'\s*([\d,]+)\s+(.*)$',l)
        if not m: continue
        v=int(m.group(1).replace(',','')); k=m.group(2).strip()
        k=re.sub(r'^\S*:','',k) if ':' in k and not k.startswith('github') else k
        d[k]=d.get(k,0)+v
    return d
a=load(sys.argv[1]); b=load(sys.argv[2]); n=int(sys.argv[4])-int(sys.argv[3])
rows=sorted(((b.get(k,0)-a.get(k,0))/n,k) for k in set(a)|set(b))
tot=sum(r[0] for r in rows)
print("total %.1f instructions/op" % tot)
for v,k in reversed(rows):
    if abs(v)>=2: print("%8.1f  %s"%(v,k))
PY
