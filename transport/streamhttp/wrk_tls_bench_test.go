package streamhttp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// BenchmarkWrkEchoTLS1: one request of the HTTPS wrk row (the standard
// fixture as wrk sends it) on a keep-alive loopback connection, against
// mcpwire as `mcpwire serve --http --tls-cert/--tls-key` sets it up
// (CertFiles' TLSConfig, the reference server's typed Inline echo) and
// against bench/rawfast -tls-cert/-tls-key (fasthttp's ServeTLS with the
// same certificate). The "plain" rows are the same without TLS, so that
// what TLS adds to each server can be read from the four. The client runs
// in this process (one request at a time, the reply read as a fixed
// number of bytes), the same for every row: differences between rows are
// the servers'. Meant for instruction counts (profiles/round8.ir.sh), where
// the system calls do not count.
func BenchmarkWrkEchoTLS1(b *testing.B) { wrkEchoTLSRows(b, 1) }

// BenchmarkWrkEchoTLS64 is BenchmarkWrkEchoTLS1 over 64 connections, as
// wrk's -c64: the client sends one request at a time, to each connection
// in turn, so that the servers' per-connection state (buffers, TLS state,
// goroutine stacks) of all 64 passes through the caches as under wrk. For
// cachegrind with its cache simulation (profiles/https12.cache.sh).
// heap-B/conn is the heap the connections hold after the warm-up and
// stack-B/conn the goroutine stacks in use, per connection, both ends.
func BenchmarkWrkEchoTLS64(b *testing.B) { wrkEchoTLSRows(b, 64) }

func wrkEchoTLSRows(b *testing.B, conns int) {
	f := newTLSFixture(b)
	dir := b.TempDir()
	certFile, keyFile, err := f.leaf.WriteFiles(dir)
	if err != nil {
		b.Fatal(err)
	}
	clientConf := &tls.Config{RootCAs: f.ca.Pool(), ServerName: "localhost"}
	for _, tc := range []struct {
		name string
		tls  bool
		raw  bool
	}{{"mcpwire/tls", true, false}, {"rawfast/tls", true, true}, {"mcpwire/plain", false, false}, {"rawfast/plain", false, true}} {
		b.Run(tc.name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			var stop func()
			if tc.raw {
				srv := &fasthttp.Server{NoDefaultServerHeader: true, Handler: rawfastHandler()}
				if tc.tls {
					go func() { done <- srv.ServeTLS(ln, certFile, keyFile) }()
				} else {
					go func() { done <- srv.Serve(ln) }()
				}
				stop = func() { _ = srv.Shutdown() }
			} else {
				cfg := Config{}
				if tc.tls {
					cf, err := LoadCertFiles(certFile, keyFile, CertConfig{})
					if err != nil {
						b.Fatal(err)
					}
					cfg.TLS = cf.TLSConfig()
				}
				s := New(typedEchoEngine(b), cfg)
				go func() { done <- s.Serve(ln) }()
				stop = func() {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_ = s.Shutdown(ctx)
				}
			}
			defer func() { stop(); <-done }()
			var ms0 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms0)
			cs := make([]net.Conn, conns)
			brs := make([]*bufio.Reader, conns)
			size := 0
			for i := range cs {
				var conn net.Conn
				if tc.tls {
					conn, err = tls.Dial("tcp", ln.Addr().String(), clientConf)
				} else {
					conn, err = net.Dial("tcp", ln.Addr().String())
				}
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				cs[i], brs[i] = conn, bufio.NewReaderSize(conn, 16<<10)
				// The first reply is parsed; the rest are read as that
				// many bytes (the replies of a row have one size: the
				// Date header's length does not change).
				size = firstReply(b, conn, brs[i])
			}
			buf := make([]byte, size)
			for i := range 100 * conns { // warm-up: pools, buffers, the session ticket
				wrkRoundTrip(b, cs[i%conns], brs[i%conns], buf)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				wrkRoundTrip(b, cs[i%conns], brs[i%conns], buf)
			}
			b.StopTimer()
			if conns > 1 { // over one connection the rest of the heap drowns it
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				b.ReportMetric(float64(ms.StackInuse)/float64(conns), "stack-B/conn")
				b.ReportMetric(float64(int64(ms.HeapAlloc)-int64(ms0.HeapAlloc))/float64(conns), "heap-B/conn")
			}
			if !bytes.HasSuffix(buf, []byte("\r\n\r\n"+wrkEchoReply)) {
				b.Fatalf("reply %q", buf)
			}
		})
	}
}

func wrkRoundTrip(b *testing.B, conn net.Conn, br *bufio.Reader, buf []byte) {
	if _, err := conn.Write(wrkRequest); err != nil {
		b.Fatal(err)
	}
	if _, err := io.ReadFull(br, buf); err != nil {
		b.Fatal(err)
	}
}

// firstReply sends the wrk request once and returns its reply's size in
// bytes (head and body), checking the body.
func firstReply(b *testing.B, conn net.Conn, br *bufio.Reader) int {
	b.Helper()
	if _, err := conn.Write(wrkRequest); err != nil {
		b.Fatal(err)
	}
	head, n := 0, -1
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		head += len(line)
		if len(line) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	if n < 0 {
		b.Fatal("reply without a Content-Length")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		b.Fatal(err)
	}
	if string(body) != wrkEchoReply {
		b.Fatalf("reply body %q", body)
	}
	return head + n
}
