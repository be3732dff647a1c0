#!/usr/bin/env bash
# compare.sh — side-by-side comparison of mcpwire with go-sdk, mcp-go and raw
# ceilings, driven by `mcpwire load`. Run from anywhere; `make compare` and
# `make compare-fanout` call it after building.
#
#   ROUNDS=3 DURATION=5s WARMUP=1s bench/compare.sh            request rows (HTTP, stdio, TCP)
#   bench/compare.sh --fanout                                   fan-out rows (subscriptions/listen)
#
# Environment: ROUNDS (3), DURATION (5s), WARMUP (1s), PORT (18180: first of
# the loopback ports used), LISTENERS (1000,5000), PUBLISH_RATE (20 touch/s),
# ONLY (comma-separated row name filter), WAIT_QUIET (0: e.g. 300s waits up
# to that long for the load average to drop below half the cores), NOBUILD=1
# to skip the build.
# Raw generator output and server stderr go to bench/out/.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
PORT=${PORT:-18180}
LISTENERS=${LISTENERS:-1000,5000}
PUBLISH_RATE=${PUBLISH_RATE:-20}
ONLY=${ONLY:-}
WAIT_QUIET=${WAIT_QUIET:-0}
GO=${GO:-go}

if [[ "${NOBUILD:-}" != 1 ]]; then
	mkdir -p bin
	"$GO" build -o bin/mcpwire ./cmd/mcpwire
	(
		cd bench
		"$GO" build -o ../bin/rawfast ./rawfast
		"$GO" build -o ../bin/bench-gosdk ./servers/gosdk
		"$GO" build -o ../bin/bench-mcpgo ./servers/mcpgo
		"$GO" build -o ../bin/bench-rawtcp ./servers/rawtcp
		"$GO" build -o ../bin/bench-rawsse ./servers/rawsse
		"$GO" build -o ../bin/bench-compare ./cmd/compare
	)
fi

if ! bin/mcpwire load --help >/dev/null 2>&1; then
	echo "compare.sh: bin/mcpwire has no 'load' subcommand (the load generator); cannot run" >&2
	exit 2
fi

# 5,000 listen streams need 5,000 descriptors on each side.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

exec bin/bench-compare -bin bin -out bench/out -rounds "$ROUNDS" -d "$DURATION" -warmup "$WARMUP" \
	-port "$PORT" -listeners "$LISTENERS" -publish-rate "$PUBLISH_RATE" -only "$ONLY" -wait-quiet "$WAIT_QUIET" "$@"
