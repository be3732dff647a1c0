package load

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestHTTPRelayPathAllocs: the relay's work per request on the poller (read
// the answer, parse it, classify, record, build and write the next
// request) allocates nothing.
func TestHTTPRelayPathAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumented build")
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	const pre, post = `{"jsonrpc":"2.0","id":`, `,"result":{"resultType":"complete","content":[{"type":"text","text":"hello world"}],"isError":false}}`
	peerDone := make(chan struct{})
	go func() {
		defer close(peerDone)
		var buf [8192]byte
		out := make([]byte, 0, 1024)
		for {
			// Every request arrives in one read (one write on a Unix socket).
			n, _ := unix.Read(fds[1], buf[:])
			if n <= 0 {
				return
			}
			id := buf[:n]
			id = id[bytes.Index(id, []byte(`"id":`))+5:]
			id = id[:bytes.IndexByte(id, ',')]
			out = append(out[:0], "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "...)
			out = strconv.AppendInt(out, int64(len(pre)+len(id)+len(post)), 10)
			out = append(append(append(out, "\r\n\r\n"+pre...), id...), post...)
			if _, err := unix.Write(fds[1], out); err != nil {
				return
			}
		}
	}()
	r := &run{cfg: Config{Timeout: time.Second}, t: &target{kind: "http", addr: "x", host: "x", path: "/mcp"}, base: time.Now()}
	r.sched = newSched(r.base, 0, 0, 0, 0, 0)
	r.tpls = []*reqTemplate{newTemplate("tools/call", callParams("echo", []byte(`{"text":"hello world"}`)), true)}
	tool := "echo"
	r.tpls[0].head = httpHead(r.t, "tools/call", &tool, nil)
	w := r.newHTTPWorker(0)
	w.relay, w.kick = true, make(chan bool, 1)
	w.conn.br.Reset(nil, make([]byte, 16<<10))
	w.conn.br.Push = true
	w.setFD(&fdConn{fd: fds[0]})
	w.prepare(true)
	if !w.send() {
		t.Fatal("send failed")
	}
	allocs := testing.AllocsPerRun(200, func() { w.readable(nil, nil) })
	if allocs != 0 {
		t.Errorf("%v allocations per request", allocs)
	}
	if w.fd == nil || w.rec.requests < 200 || len(w.rec.errs.named)+len(w.rec.errs.http)+len(w.rec.errs.rpc) != 0 {
		t.Errorf("connection %v, %d requests, errors %v %v %v", w.fd, w.rec.requests, w.rec.errs.named, w.rec.errs.http, w.rec.errs.rpc)
	}
	unix.Shutdown(fds[0], unix.SHUT_RDWR)
	<-peerDone
	unix.Close(fds[0])
	unix.Close(fds[1])
}
