#!/bin/bash
# round24.stages.sh ROUNDS VARIANT...: what each stage of an HTTP request costs live. Builds this
# checkout with round24.stages.patch applied (in a throwaway worktree) -- the patch adds switches
# read from the environment: EXP_CANNED=1 answers a canned 296-byte reply at the top of fastHandler,
# 2 in serve after the Accept check, 3 after the body is peeked (before the engine);
# EXP_NODURS=1 turns off the duration histograms, EXP_NOTRACK=1 the tracker's list, EXP_NODL=1
# limitConn's deadlines -- then runs raw fasthttp, the floor and each VARIANT (main, c1, c2, c3,
# nodurs, notrack, nodl) under wrk -t1 -c64 -d3s, interleaved, ROUNDS rounds. One line per run:
# round, name, req/s, server CPU us/request. round24.stages.py prints medians of per-round ratios.
# For a measurement only: the switches are not in the product.
set -euo pipefail
cd "$(dirname "$0")/.."
R=${1:-8}; shift
port=18485
tree=$(mktemp -d)/tree
git worktree add --detach "$tree" HEAD >/dev/null
trap 'git worktree remove --force "$tree"' EXIT
(cd "$tree" && git apply "$OLDPWD/profiles/round24.stages.patch" && go build -o "$tree/mcpwire" ./cmd/mcpwire)
(cd bench && go build -o ../bin/rawfast ./rawfast)
. profiles/wrkrun.sh # run NAME CMD...
srv=("$tree/mcpwire" serve --http "127.0.0.1:$port" --log-level error)
for r in $(seq 1 "$R"); do
	run raw bin/rawfast -addr "127.0.0.1:$port" -splice-id
	run floor bin/rawfast -addr "127.0.0.1:$port" -floor
	for v in "$@"; do
		case $v in
		main) run main "${srv[@]}" ;;
		c[0-9]) run "$v" EXP_CANNED="${v#c}" "${srv[@]}" ;;
		*) run "$v" "EXP_${v^^}=1" "${srv[@]}" ;;
		esac
	done
done
