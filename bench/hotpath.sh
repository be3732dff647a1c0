#!/usr/bin/env bash
# hotpath.sh — the hot-path micro-benchmarks of two checkouts, interleaved,
# for benchstat: the code before a change (OLD) and after it (NEW).
#
#   bench/hotpath.sh OLD_DIR NEW_DIR [OUT_PREFIX]
#
# Each round runs the set once in OLD_DIR and once in NEW_DIR (COUNT runs of
# each benchmark, -p 1, -benchmem), ROUNDS rounds (default 3 × 2), so that
# machine noise falls on both sides alike. The package paths of before the
# issue-18 layout (engine/streamhttp, engine/stdio, engine/linestream,
# engine/client…) are rewritten to today's in the OLD output, so benchstat
# pairs the rows. Writes OUT_PREFIX.old.txt, OUT_PREFIX.new.txt and
# OUT_PREFIX.benchstat.txt (default prefix bench/out/hotpath).
#
# Environment: ROUNDS (3), COUNT (2), BENCHTIME (1s), PKGS (a regular
# expression: only the packages it matches, e.g. '^client').
set -euo pipefail
OLD=$(cd "$1" && pwd)
NEW=$(cd "$2" && pwd)
OUT=${3:-bench/out/hotpath}
ROUNDS=${ROUNDS:-3}
COUNT=${COUNT:-2}
BENCHTIME=${BENCHTIME:-1s}
mkdir -p "$(dirname "$OUT")"
: > "$OUT.old.txt"
: > "$OUT.new.txt"

# package (today's path, then the path before the layout change) and the
# benchmarks of it that are on a hot path.
SET=(
	"framing framing ^Benchmark(Reader|Decoder|WriteFrame)$"
	"codec codec ^Benchmark(Peek|SonicGet3Fields|AppendTextResult$|AppendProgress)"
	"engine engine ^Benchmark(InlineRequest|ToolArgs|ArgCheck|Observe)"
	"transport/linestream engine/linestream ^Benchmark(StreamEcho|HubFanout|ProgressBurst)"
	"transport/stdio engine/stdio ^BenchmarkStdioEcho"
	"transport/streamhttp engine/streamhttp ^Benchmark(HeaderCheck|FastEchoInMemory|RawFasthttpInMemory)$"
	"client/streamhttp engine/streamhttp ^BenchmarkDialRoundTrip$"
	"client/target engine/client/target ^BenchmarkClientCall$"
)

run() { # run DIR OUTFILE
	local dir=$1 out=$2 entry pkg oldpkg re p
	for entry in "${SET[@]}"; do
		read -r pkg oldpkg re <<<"$entry"
		[[ -z "${PKGS:-}" || "$pkg" =~ $PKGS ]] || continue
		p=$pkg
		[[ -d "$dir/$p" ]] || p=$oldpkg
		[[ -d "$dir/$p" ]] || continue
		(cd "$dir" && go test -p 1 -run '^$' -bench "$re" -benchmem -benchtime "$BENCHTIME" -count "$COUNT" "./$p/") |
			sed -e "s#^pkg: github.com/mcpwire/mcpwire/$oldpkg\$#pkg: github.com/mcpwire/mcpwire/$pkg#" >>"$out"
	done
}

for r in $(seq "$ROUNDS"); do
	echo "hotpath: round $r of $ROUNDS: old" >&2
	run "$OLD" "$OUT.old.txt"
	echo "hotpath: round $r of $ROUNDS: new" >&2
	run "$NEW" "$OUT.new.txt"
done

command -v benchstat >/dev/null 2>&1 || go install golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
PATH="$PATH:$(go env GOPATH)/bin" benchstat "$OUT.old.txt" "$OUT.new.txt" | tee "$OUT.benchstat.txt"
