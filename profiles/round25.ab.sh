#!/bin/bash
# round25.ab.sh ROUNDS NAME=BIN...: live A/B of mcpwire builds. Each round runs raw fasthttp, the floor
# (bench/rawfast) and each BIN (mcpwire serve --http) under wrk -t1 -c64 -d3s -s bench/wrk/fixture.lua after a
# 1 s warm-up, one line per run: round, name, req/s, server CPU µs/request (from /proc). Medians of
# per-round ratios: profiles/round24.stages.py FILE (÷main needs a NAME main).
set -euo pipefail
cd "$(dirname "$0")/.."
R=${1:-8}; shift
port=18485
(cd bench && go build -o ../bin/rawfast ./rawfast) # this checkout's ceilings, never a stale build
. profiles/wrkrun.sh # run NAME CMD...
for r in $(seq 1 "$R"); do
	run raw bin/rawfast -addr "127.0.0.1:$port" -splice-id
	run floor bin/rawfast -addr "127.0.0.1:$port" -floor
	for v in "$@"; do
		run "${v%%=*}" "${v#*=}" serve --http "127.0.0.1:$port" --log-level error
	done
done
