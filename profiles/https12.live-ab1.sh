#!/bin/bash
# alternating live rounds: A = mcpwire (default 16 KiB read buffer), B = mcpwire --max-header 4096, R = rawfast TLS
W=/work/wt-https12/bench/wrk/fixture.lua
cd /tmp/h12
start() { # name port args...
  local p=$1; shift; "$@" > /dev/null 2>&1 & echo $! > srv.pid; sleep 0.7
}
for round in 1 2 3 4 5; do
  for v in A B R; do
    case $v in
      A) start 18911 ./mcpwire serve --http 127.0.0.1:18911 --log-level error --tls-cert cert.pem --tls-key key.pem; url=https://127.0.0.1:18911/mcp;;
      B) start 18912 ./mcpwire serve --http 127.0.0.1:18912 --log-level error --tls-cert cert.pem --tls-key key.pem --max-header 4096; url=https://127.0.0.1:18912/mcp;;
      R) start 18913 ./rawfast -addr 127.0.0.1:18913 -splice-id -tls-cert cert.pem -tls-key key.pem; url=https://127.0.0.1:18913/mcp;;
    esac
    nice -n 5 wrk -t1 -c64 -d1s -s $W $url > /dev/null 2>&1
    rps=$(nice -n 5 wrk -t1 -c64 -d5s -s $W $url | awk '/Requests\/sec/{print $2} /Non-2xx/{print "NON2XX"}')
    echo "round $round $v $rps load $(cut -d' ' -f1 /proc/loadavg)"
    kill $(cat srv.pid); wait $(cat srv.pid) 2>/dev/null
  done
done
