#!/usr/bin/env bash
# Profiles of the reference server under load (make profile): CPU and
# allocation profiles for the HTTP echo, stdio echo and HTTP fan-out
# workloads, with `pprof -top` summaries, written to profiles/. DURATION
# (default 10s) per workload.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION="${DURATION:-10s}"
OUT="${OUT:-profiles}"
mkdir -p "$OUT"
go build -o bin/mcpwire ./cmd/mcpwire

# profile_http NAME LOAD-ARGS...: serve HTTP on a free loopback port with
# profiles named NAME, run `mcpwire load LOAD-ARGS URL`, stop the server.
profile_http() {
  local name=$1; shift
  local port pid
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  bin/mcpwire serve --http "127.0.0.1:$port" --log-level error \
    --cpuprofile "$OUT/$name.cpu.prof" --memprofile "$OUT/$name.allocs.prof" 2>/dev/null &
  pid=$!
  trap "kill $pid 2>/dev/null || true" EXIT
  for _ in $(seq 50); do (echo > "/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  bin/mcpwire load "$@" "http://127.0.0.1:$port/mcp" | tee "$OUT/$name.load.txt"
  kill -INT $pid; wait $pid || true
  trap - EXIT
}

profile_http http -d "$DURATION" -c 64
# fan-out: 1,000 listen streams, updates published as fast as the touch
# calls go (the SSE write path and the hub under load).
profile_http fanout -workload listen -listeners 1000 -uri test://load/fan -publish-rate 200 -d "$DURATION"

# stdio: the generator spawns the server itself; profiles are written when stdin ends.
bin/mcpwire load -d "$DURATION" -c 1 -w 64 \
  "stdio:bin/mcpwire serve --stdio --log-level error --cpuprofile $OUT/stdio.cpu.prof --memprofile $OUT/stdio.allocs.prof" | tee "$OUT/stdio.load.txt"

for w in http stdio fanout; do
  go tool pprof -top -nodecount 40 bin/mcpwire "$OUT/$w.cpu.prof" > "$OUT/$w.cpu.top.txt" 2>/dev/null
  go tool pprof -sample_index=alloc_objects -top -nodecount 25 bin/mcpwire "$OUT/$w.allocs.prof" > "$OUT/$w.allocs.top.txt" 2>/dev/null
done
echo "profile: wrote $OUT/{http,stdio,fanout}.{cpu,allocs}.prof and their .top.txt summaries"
