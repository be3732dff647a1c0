package main

import "go.uber.org/goleak"

// cmdLeakIgnores are the goroutines TestMain's leak check (goleak) lets
// outlive the tests, each one process-wide and not the command's to end:
var cmdLeakIgnores = []goleak.Option{
	// fasthttp's Date header refresher, started once per process.
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
	// A stopped fasthttp server's worker-pool cleaner sees the stop only
	// after its idle-worker sleep (10 s), then exits by itself.
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
	// gnet's package-level goroutine pool (ants), kept for the process.
	goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
	goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
	// rueidis's reconnect delay after a failed dial (a bounded sleep, under
	// 1 s, that outlives the store's Close): a refused TLS handshake
	// (TestServeManagedRedis). state/redisstate's TestMain ignores it too.
	goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*call).DelayDo.func1"),
}
