#!/bin/bash
# prof.sh ROUNDS MODE(tcp|stdio|unix) PREFIX: server CPU profiles of main (old) and lines7 (new), alternating,
# order swapped every round; server CPU per message = profile samples / requests (warm-up 0: every request counted).
# The generator is main's for both.
n=$1; mode=$2; pre=$3; port=18987; mkdir -p /tmp/l7ab
for r in $(seq 1 $n); do
  if (( r % 2 )); then order="old new"; else order="new old"; fi
  for w in $order; do
    bin=/tmp/l7/mcpwire-main; [[ $w == new ]] && bin=/tmp/l7/mcpwire-l7
    prof=$pre.$mode.$w.r$r.prof
    case $mode in
      tcp) nice -n -19 $bin serve --tcp 127.0.0.1:$port --log-level error --cpuprofile $prof & pid=$!; tgt=tcp://127.0.0.1:$port;;
      unix) rm -f /tmp/l7ab/p.sock; nice -n -19 $bin serve --unix /tmp/l7ab/p.sock --log-level error --cpuprofile $prof & pid=$!; tgt=unix:///tmp/l7ab/p.sock;;
      stdio) pid=; tgt="stdio:$bin serve --stdio --log-level error --cpuprofile $prof";;
    esac
    sleep 0.4
    out=$(nice -n -19 /tmp/l7/mcpwire-main load -warmup 0 -d 5s -c 1 -w 64 "$tgt" 2>&1)
    if [[ -n $pid ]]; then kill -INT $pid; wait $pid 2>/dev/null; else sleep 0.5; fi
    req=$(echo "$out" | awk '/^requests/{print $2}')
    echo $req > ${prof%.prof}.req
    ms=$(go tool pprof -top -nodecount 1 $bin $prof 2>/dev/null | sed -n 's/.*Total samples = \([0-9.]*\)\(m\?s\).*/\1 \2/p')
    us=$(python3 -c "v,u='$ms'.split(); v=float(v)/(1000 if u=='ms' else 1); print(round(v*1e6/$req,3))")
    echo "r$r $w $mode requests=$req server_cpu_us_per_msg=$us load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
