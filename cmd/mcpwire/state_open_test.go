package main

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/redistest"
	"github.com/mcpwire/mcpwire/state/redisstate"
)

// TestOpenStateWarnsEviction: serve --state on a Redis whose
// maxmemory-policy can evict state keys starts with a loud warning in its
// log (issue 20, F9).
func TestOpenStateWarnsEviction(t *testing.T) {
	r := redistest.Start(t)
	redisCmd(t, r.URL(), "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	var logs bytes.Buffer
	st, err := openState(context.Background(), r.URL(), redisstate.Config{}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.close {
		defer c()
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "maxmemory-policy=allkeys-lru") {
		t.Fatalf("no warning for an evicting Redis: %q", logs.String())
	}
}

// redisCmd sends one command to the Redis at url (redis://HOST:PORT/DB)
// and reads one line of reply.
func redisCmd(t *testing.T, url string, args ...string) {
	t.Helper()
	addr := strings.TrimPrefix(strings.TrimSuffix(url, "/0"), "redis://")
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil || !strings.HasPrefix(string(buf[:n]), "+OK") {
		t.Fatalf("%v: %q %v", args, buf[:n], err)
	}
}
