#!/bin/bash
# footprint.sh [ROW...]: the code and data a request of BenchmarkWrkEcho touches, per row (mcpwire,
# rawfast): valgrind's lackey traces every fetch and access of 200 requests on one in-memory
# connection, and footprint.py reads the window between the 250th and 251st entry to fasthttp's
# RequestHeader.tryRead (once a request; the 101 of the b.N=1 run come first). Round 21
# (profiles/round21.footprint.txt). Takes a few minutes a row.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=("$@"); [[ ${#rows[@]} -gt 0 ]] || rows=(mcpwire rawfast)
bin=$(mktemp -d)/streamhttp.test
go test -c -o "$bin" ./transport/streamhttp
go tool nm -size -sort address "$bin" > "$bin.nm"
marker=$(awk '$4 == "github.com/valyala/fasthttp.(*RequestHeader).tryRead" {print $1}' "$bin.nm")
fifo=$(dirname "$bin")/trace
mkfifo "$fifo"
for row in "${rows[@]}"; do
	echo "## $row"
	# lackey writes its trace into the fifo; the reader stops after its window, and the run is
	# stopped then (it would otherwise go on tracing to the end of the benchmark).
	GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1 GOMAXPROCS=1 GOGC=off \
		valgrind --tool=lackey --trace-mem=yes --log-file="$fifo" "$bin" -test.run XXX \
		-test.bench "BenchmarkWrkEcho\$/$row\$" -test.benchtime 200x >/dev/null 2>&1 &
	vg=$!
	python3 profiles/footprint.py "$marker" 250 "$bin.nm" < "$fifo" || true
	kill "$vg" 2>/dev/null || true
	wait "$vg" 2>/dev/null || true
done
rm -rf "$(dirname "$bin")"
