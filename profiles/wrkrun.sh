# wrkrun.sh, sourced (from the repository's root) by round24.stages.sh and round25.ab.sh.
# run NAME [VAR=VALUE...] CMD...: starts CMD, a server on 127.0.0.1:$port, warms it with wrk for 1 s,
# then runs wrk -t1 -c64 -d3s with the standard fixture (bench/wrk/fixture.lua) and prints one line:
# $r (the round), NAME, req/s, and the server's CPU (user + system, from /proc) in µs a request.
run() {
	local name=$1; shift
	env "$@" >/dev/null 2>&1 &
	local pid=$!
	sleep 0.6
	local W="wrk -t1 -c64 -d1s -s bench/wrk/fixture.lua http://127.0.0.1:$port/mcp"
	$W >/dev/null 2>&1
	local t0 t1 out n
	t0=$(awk '{print $14+$15}' /proc/$pid/stat)
	out=$(${W/-d1s/-d3s} 2>&1)
	t1=$(awk '{print $14+$15}' /proc/$pid/stat)
	n=$(awk '/requests in/{print $1}' <<<"$out")
	kill $pid; wait $pid 2>/dev/null || true
	echo "$r $name $((n / 3)) $(python3 -c "print('%.2f' % (($t1 - $t0) * 1e4 / $n))")"
}
