#!/usr/bin/env bash
# compare.sh — side-by-side comparison of mcpwire with go-sdk, mcp-go and raw
# ceilings, driven by `mcpwire load`, and by wrk (HTTP rows) and tsung (TCP
# rows). Run from anywhere; `make compare` and `make compare-fanout` call it
# after building.
#
#   ROUNDS=3 DURATION=5s WARMUP=1s bench/compare.sh            request rows (HTTP, stdio, TCP, Unix)
#   bench/compare.sh --fanout                                   fan-out rows (subscriptions/listen)
#
# Environment: ROUNDS (3), DURATION (5s), WARMUP (1s), PORT (18180: first of
# the loopback ports used), LISTENERS (1000,5000), PUBLISH_RATE (20 touch/s),
# ONLY (comma-separated row name filter), WAIT_QUIET (0: e.g. 300s waits up
# to that long for the load average to drop below half the cores), NOBUILD=1
# to skip the build, TSUNG=0 to skip the tsung rows (otherwise the Debian
# package tsung, the outside generator of the TCP rows, is installed when
# missing), WRK=0 to skip the wrk rows (likewise the Debian package wrk, the
# outside generator of the HTTP rows), BASE=path/to/another/mcpwire to run
# each plain mcpwire row again with that binary as "mcpwire@base …" in the
# same rounds (before/after a change).
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
		"$GO" build -o ../bin/bench-rawgnet ./servers/rawgnet
		"$GO" build -o ../bin/bench-rawsse ./servers/rawsse
		"$GO" build -o ../bin/bench-compare ./cmd/compare
	)
fi

# The load generator runs from its own copy of the binary, so that no server
# row shares its executable file with the generator: only the plain mcpwire
# rows would, never the @base or raw ones (profiles/README.md, round 13). A
# -gen given to this script comes later on the command line and wins.
if ! cmp -s bin/mcpwire bin/mcpwire-load 2>/dev/null; then
	cp bin/mcpwire bin/mcpwire-load.tmp && mv bin/mcpwire-load.tmp bin/mcpwire-load
fi

if ! bin/mcpwire load --help >/dev/null 2>&1; then
	echo "compare.sh: bin/mcpwire has no 'load' subcommand (the load generator); cannot run" >&2
	exit 2
fi

# install_deb PACKAGE: install a Debian package with apt-get (sudo when not
# root); reports failure without stopping the script.
install_deb() {
	local SUDO=
	[[ $(id -u) == 0 ]] || SUDO=sudo
	{ $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$1"; } >&2
}

# tsung: a load generator we did not write, for the TCP rows (request table only).
TSUNG_BIN=tsung
if [[ "${TSUNG:-1}" == 0 ]]; then
	TSUNG_BIN=
elif [[ " $* " != *" --fanout "* ]] && ! command -v tsung >/dev/null 2>&1; then
	echo "compare.sh: installing tsung (Debian package) for the outside-generator rows; TSUNG=0 skips them" >&2
	install_deb tsung || echo "compare.sh: could not install tsung; its rows are skipped" >&2
fi

# wrk: the outside generator of the HTTP rows (request table only).
WRK_BIN=wrk
if [[ "${WRK:-1}" == 0 ]]; then
	WRK_BIN=
elif [[ " $* " != *" --fanout "* ]] && ! command -v wrk >/dev/null 2>&1; then
	echo "compare.sh: installing wrk (Debian package) for the outside-generator HTTP rows; WRK=0 skips them" >&2
	install_deb wrk || echo "compare.sh: could not install wrk; its rows are skipped" >&2
fi

# 5,000 listen streams need 5,000 descriptors on each side.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# tsung starts Erlang's port mapper (epmd), which outlives it: stop it
# afterwards unless it was already running.
EPMD_BEFORE=0
pgrep -x epmd >/dev/null 2>&1 && EPMD_BEFORE=1
status=0
bin/bench-compare -bin bin -out bench/out -rounds "$ROUNDS" -d "$DURATION" -warmup "$WARMUP" \
	-port "$PORT" -listeners "$LISTENERS" -publish-rate "$PUBLISH_RATE" -only "$ONLY" -wait-quiet "$WAIT_QUIET" \
	-tsung "$TSUNG_BIN" -wrk "$WRK_BIN" -wrk-scripts bench/wrk -base "${BASE:-}" -gen bin/mcpwire-load "$@" || status=$?
if [[ $EPMD_BEFORE == 0 ]] && command -v epmd >/dev/null 2>&1 && pgrep -x epmd >/dev/null 2>&1; then
	epmd -kill >/dev/null 2>&1 || true
fi
exit $status
