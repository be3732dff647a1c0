#!/bin/bash
# alternating live rounds, wrk -t1 -cC -d5s (1 s warm-up): O = mcpwire built from f9ed24e, N = mcpwire of branch https12, R = rawfast -tls
W=/work/wt-https12/bench/wrk/fixture.lua
cd /tmp/h12
for c in 64 1; do
for round in 1 2 3; do
  for v in O N R; do
    case $v in
      O) ./mcpwire.old serve --http 127.0.0.1:18931 --log-level error --tls-cert cert.pem --tls-key key.pem >/dev/null 2>&1 & pid=$!; url=https://127.0.0.1:18931/mcp;;
      N) ./mcpwire serve --http 127.0.0.1:18932 --log-level error --tls-cert cert.pem --tls-key key.pem >/dev/null 2>&1 & pid=$!; url=https://127.0.0.1:18932/mcp;;
      R) ./rawfast -addr 127.0.0.1:18933 -splice-id -tls-cert cert.pem -tls-key key.pem >/dev/null 2>&1 & pid=$!; url=https://127.0.0.1:18933/mcp;;
    esac
    sleep 0.7
    nice -n 5 wrk -t1 -c$c -d1s -s $W $url > /dev/null 2>&1
    rps=$(nice -n 5 wrk -t1 -c$c -d5s -s $W $url | awk '/Requests\/sec/{print $2} /Non-2xx/{print "NON2XX"}')
    echo "c$c round $round $v $rps load $(cut -d' ' -f1 /proc/loadavg)"
    kill $pid; wait $pid 2>/dev/null
  done
done
done
