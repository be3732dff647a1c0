// Package redistest starts a private redis-server on a loopback port for
// a test and stops it by its PID. Tests only.
package redistest

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RequireEnv makes a missing redis-server a failure instead of a skip
// (CI sets it).
const RequireEnv = "MCPWIRE_REQUIRE_REDIS"

// Server is a redis-server a test started, without persistence.
type Server struct {
	bin  string
	port int
	dir  string
	args []string // more arguments (StartArgs)
	cmd  *exec.Cmd
}

// Start starts a private redis-server, killed when tb ends. Without the
// binary in PATH the test is skipped, unless RequireEnv is set.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return StartArgs(tb)
}

// StartArgs is Start with more redis-server arguments (TLS, a
// requirepass, --replicaof …). The plain port stays open on loopback: it
// is how the server is known to be ready.
func StartArgs(tb testing.TB, args ...string) *Server {
	tb.Helper()
	r := &Server{bin: binary(tb), port: FreePort(tb), dir: tb.TempDir(), args: args}
	r.Restart(tb)
	tb.Cleanup(func() { r.Kill() })
	return r
}

// binary is redis-server's path; without it the test is skipped, unless
// RequireEnv is set.
func binary(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			tb.Fatalf("redis-server not in PATH and %s is set", RequireEnv)
		}
		tb.Skip("redis-server not in PATH")
	}
	return bin
}

// FreePort returns a loopback TCP port free a moment ago.
func FreePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Port is the server's plain TCP port on 127.0.0.1.
func (r *Server) Port() int { return r.port }

// URL is the server's address as a --state URL (database 0).
func (r *Server) URL() string { return "redis://127.0.0.1:" + strconv.Itoa(r.port) + "/0" }

// Pid is the running server's process id (0 after Kill).
func (r *Server) Pid() int {
	if r.cmd == nil {
		return 0
	}
	return r.cmd.Process.Pid
}

// Restart starts the server again on the same port (after Kill) and waits
// until it answers PING.
func (r *Server) Restart(tb testing.TB) {
	tb.Helper()
	args := append([]string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir, "--loglevel", "warning", "--daemonize", "no"}, r.args...)
	r.start(tb, args)
}

// start runs redis-server with args and waits until its plain port
// answers PING (or refuses it for want of a password).
func (r *Server) start(tb testing.TB, args []string) {
	tb.Helper()
	r.cmd = exec.Command(r.bin, args...)
	r.cmd.Dir = r.dir
	dieWithParent(r.cmd)
	if err := r.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(r.port), 100*time.Millisecond)
		if err == nil {
			_, _ = c.Write([]byte("PING\r\n"))
			buf := make([]byte, 16)
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			n, _ := c.Read(buf)
			c.Close()
			if r := string(buf[:n]); r == "+PONG\r\n" || strings.HasPrefix(r, "-NOAUTH") {
				return
			}
		}
		if time.Now().After(deadline) {
			r.Kill()
			tb.Fatalf("redis-server on port %d not ready within 5s", r.port)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill stops the server by its PID at once (an outage, not a shutdown).
func (r *Server) Kill() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.cmd = nil
}
