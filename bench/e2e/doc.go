// Package e2e holds end-to-end benchmarks of mcpwire's transports: an
// in-process engine served over real loopback HTTP/1.1, stdio pipes, and
// TCP and Unix-domain stream sockets, driven by small hand-written clients
// that allocate nothing per request, so that B/op and allocs/op are the
// server's (and the kernel round trip's) cost.
//
//	go test -run '^$' -bench . -benchtime 2s ./e2e/
//
// Every benchmark reports ns/op, B/op, allocs/op and a throughput metric
// (req/s, or deliveries/s for the listen fan-out). The package has no
// non-test code besides this comment.
package e2e
