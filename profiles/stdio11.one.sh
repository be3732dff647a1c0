#!/bin/bash
# one.sh TAG DUR SERVER... : one load run, prints tag rps cpu_us/req vcs/req ivcs/req
tag=$1; d=$2; shift 2
f=/tmp/s11/ru.$tag.$$; rm -f $f
out=$(nice -n 5 /tmp/s11/mcpwire load -workload call -tool echo -args '{"text":"hello world"}' -c 1 -w 64 -d $d -warmup 0s -json "stdio:/tmp/s11/wrap.sh $f $*" 2>/dev/null)
sleep 0.2
rps=$(echo "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("rps") or j.get("RPS"), j.get("requests") or j.get("Requests"))')
read u s w c < <(tail -1 $f)
python3 - "$tag" $rps $u $s $w $c <<'PY'
import sys
tag,rps,req,u,s,w,c=sys.argv[1],float(sys.argv[2]),float(sys.argv[3]),float(sys.argv[4]),float(sys.argv[5]),float(sys.argv[6]),float(sys.argv[7])
print(f"{tag} rps={rps:.0f} req={req:.0f} cpu_us/req={(u+s)/req*1e6:.3f} usr={u/req*1e6:.3f} sys={s/req*1e6:.3f} vcs/req={w/req:.4f} ivcs/req={c/req:.4f}")
PY
