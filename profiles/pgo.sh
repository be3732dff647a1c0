#!/bin/bash
# pgo.sh [OUT]: the profile `go build` uses for cmd/mcpwire (profile-guided optimization; Go reads
# cmd/mcpwire/default.pgo by itself, -pgo=auto). It runs the server's side of `make compare` -- the
# standard fixture (echo with its progressToken) over HTTP, HTTPS and the legacy 2025-11-25
# endpoint under wrk 64x1, and over stdio, TCP and Unix sockets under `mcpwire load` 1x64 (TCP also
# 64x1) -- with `serve --cpuprofile`, each for $SECS seconds, and merges the server profiles into
# OUT (default cmd/mcpwire/default.pgo). Only the servers are profiled: the generator's own code
# (`mcpwire load`, the same binary) gets no samples and so is built as without a profile, and so
# are the ceilings (other binaries). The binary profiled is built with -pgo=off, so the result does
# not depend on the profile it replaces. Needs wrk and openssl (`make pgo` installs wrk). Takes
# about two minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-cmd/mcpwire/default.pgo}
secs=${SECS:-6}
port=${PGO_PORT:-18590}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
go build -pgo=off -o "$work/mcpwire" ./cmd/mcpwire
bin=$work/mcpwire
fixture=bench/wrk/fixture.lua
n=0

# serve ARGS...: starts `mcpwire serve ARGS --cpuprofile` in the background and waits for it.
serve() {
	n=$((n + 1))
	"$bin" serve "$@" --log-level error --cpuprofile "$work/p$n.pprof" >/dev/null 2>"$work/s$n.err" &
	srv=$!
	sleep 0.5
}
# stop: ends the server (its profile is written on SIGTERM) and checks it left one.
stop() {
	kill -TERM "$srv"
	wait "$srv" || true
	[[ -s "$work/p$n.pprof" ]] || { echo "pgo.sh: server $n wrote no profile:" >&2; cat "$work/s$n.err" >&2; exit 1; }
}
# wrkrun SCRIPT URL: wrk 64x1 for $secs seconds; fails when wrk saw non-2xx answers.
wrkrun() {
	local o
	o=$(wrk -t1 -c64 -d"${secs}s" -s "$1" "$2")
	if grep -q "Non-2xx" <<<"$o"; then echo "pgo.sh: $2 answered errors:" >&2; echo "$o" >&2; exit 1; fi
	awk -v u="$2" '/Requests\/sec/{print "pgo.sh: " u " " $2 " req/s"}' <<<"$o"
}
# load ARGS TARGET: mcpwire load with the standard fixture; fails when a request failed.
load() {
	"$bin" load -workload call -tool echo -args '{"text":"hello world"}' -d "${secs}s" -warmup 1s \
		-max-error-share 0 -progress off "$@" | awk -v t="${*: -1}" '/^requests/{print "pgo.sh: " t " " $0}'
}

# HTTP and the legacy endpoint, one process (as `make compare` serves them).
serve --http "127.0.0.1:$port" --legacy-path /mcp-2025
wrkrun "$fixture" "http://127.0.0.1:$port/mcp"
sid=$(curl -s -D - -o /dev/null -X POST -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' \
	-d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}' \
	"http://127.0.0.1:$port/mcp-2025" | awk 'tolower($1)=="mcp-session-id:"{print $2}' | tr -d '\r')
[[ -n "$sid" ]] || { echo "pgo.sh: the legacy endpoint opened no session" >&2; exit 1; }
# One session for all 64 connections: each request gets an id of its own (a session refuses an
# id in flight), formatted once and reused, as the compare harness does.
cat bench/wrk/fixture-legacy.lua - >"$work/legacy.lua" <<EOF
wrk.headers["Mcp-Session-Id"] = "$sid"
local reqs, k = {}, 0
request = function()
  k = k % 4096 + 1
  local r = reqs[k]
  if r == nil then
    r = wrk.format(nil, nil, nil, (string.gsub(wrk.body, '"id":%d+', '"id":' .. (100000000 + k), 1)))
    reqs[k] = r
  end
  return r
end
EOF
wrkrun "$work/legacy.lua" "http://127.0.0.1:$port/mcp-2025"
stop

# HTTPS with a throwaway certificate for 127.0.0.1.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
serve --http "127.0.0.1:$port" --tls-cert "$work/cert.pem" --tls-key "$work/key.pem"
wrkrun "$fixture" "https://127.0.0.1:$port/mcp"
stop

# stdio: the generator starts the profiled server.
n=$((n + 1))
load -c 1 -w 64 "stdio:$bin serve --stdio --log-level error --cpuprofile $work/p$n.pprof"
[[ -s "$work/p$n.pprof" ]] || { echo "pgo.sh: the stdio server wrote no profile" >&2; exit 1; }

# TCP (1x64 and 64x1) and Unix (1x64).
serve --tcp "127.0.0.1:$port"
load -c 1 -w 64 "tcp://127.0.0.1:$port"
load -c 64 -w 1 "tcp://127.0.0.1:$port"
stop
serve --unix "$work/s.sock"
load -c 1 -w 64 "unix://$work/s.sock"
stop

go tool pprof -proto "$work"/p*.pprof >"$work/merged.pgo" 2>/dev/null
mv "$work/merged.pgo" "$out"
echo "pgo.sh: $out from $n server profiles ($(wc -c <"$out") bytes)"
