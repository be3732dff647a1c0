// Package demo drives a reference server over stdio end to end: the
// `mcpwire demo` command. It runs on the public client (package client
// with client/stdio's Command), plus a few raw lines sent through the client's line
// transport to show how the server treats bad input.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/stdio"
	"github.com/mcpwire/mcpwire/mcp"
)

// Config configures Run.
type Config struct {
	// Server is the command line of the server to drive, e.g.
	// [/path/to/mcpwire serve --stdio].
	Server []string
	// Load is how long the closing load run lasts. Default 2 s.
	Load time.Duration
	// Window is the number of requests kept in flight during the load run.
	// Default 32.
	Window int
	Out    io.Writer
}

type report struct {
	out            io.Writer
	passed, failed int
}

func (r *report) check(name string, ok bool, detail string, args ...any) {
	mark := "ok  "
	if ok {
		r.passed++
	} else {
		r.failed++
		mark = "FAIL"
	}
	fmt.Fprintf(r.out, "  %s %-34s %s\n", mark, name, fmt.Sprintf(detail, args...))
}

// unmatched collects the messages that belong to no request (the -32700
// for a bad line, a reply that arrives after its cancel).
type unmatched struct {
	mu   sync.Mutex
	msgs []json.RawMessage
}

func (u *unmatched) add(m []byte) {
	u.mu.Lock()
	u.msgs = append(u.msgs, m)
	u.mu.Unlock()
}

func (u *unmatched) since(n int) []json.RawMessage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]json.RawMessage(nil), u.msgs[n:]...)
}

func (u *unmatched) len() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.msgs)
}

// Run starts the server, exercises it end to end, runs a short load, stops
// it, and prints what happened. It returns an error when any check failed.
func Run(ctx context.Context, opt Config) error {
	if opt.Load <= 0 {
		opt.Load = 2 * time.Second
	}
	if opt.Window <= 0 {
		opt.Window = 32
	}
	r := &report{out: opt.Out}
	fmt.Fprintf(opt.Out, "mcpwire demo: starting %s\n", strings.Join(opt.Server, " "))
	var stderrBytes atomic.Int64
	quiet := slog.New(slog.DiscardHandler)
	cmd := &stdio.Command{Path: opt.Server[0], Args: opt.Server[1:], Logger: quiet,
		Stderr: func(line string) { stderrBytes.Add(int64(len(line) + 1)) }}
	var late unmatched
	lt := client.NewLineTransport(cmd.Dial, client.LineConfig{NoReconnect: true, Logger: quiet, OnUnmatched: late.add})
	c := client.New(lt, client.Config{Info: mcp.Implementation{Name: "mcpwire-demo", Version: "1"}, Logger: quiet, Era: client.EraModern})
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second+opt.Load)
	defer cancel()

	// server/discover
	if d, err := c.Discover(ctx); err == nil {
		r.check("server/discover", slices.Contains(d.Supported, "2026-07-28"), "versions %v, capabilities %s", d.Supported, d.Capabilities)
	} else {
		r.check("server/discover", false, "%v", err)
	}

	// tools/list
	tools, err := c.ListTools(ctx)
	r.check("tools/list", err == nil && len(tools) > 0, "%d tools %v", len(tools), errOr(err))

	// echo with non-ASCII text
	const hello = "hello, 世界"
	res, err := c.CallTool(ctx, "echo", map[string]string{"text": hello}, nil)
	r.check("tools/call echo", err == nil && res.Text() == hello, "-> %q %v", text(res), errOr(err))

	// progress
	var prog int
	res, err = c.CallTool(ctx, "sleep", map[string]int{"ms": 300, "steps": 5}, &client.CallOptions{
		OnProgress: func(client.Progress) { prog++ }})
	r.check("progress (sleep 300ms, 5 steps)", err == nil && !res.IsError && prog > 0 && prog <= 5,
		"%d progress notifications before the result %v", prog, errOr(err))

	// cancellation: the context ends the call, the client sends
	// notifications/cancelled, and nothing more arrives for it.
	before := late.len()
	cctx, ccancel := context.WithTimeout(ctx, 50*time.Millisecond)
	t0 := time.Now()
	_, err = c.CallTool(cctx, "sleep", map[string]int{"ms": 10000}, nil)
	ccancel()
	after, _ := c.CallTool(ctx, "echo", map[string]string{"text": "after cancel"}, nil)
	time.Sleep(200 * time.Millisecond)
	lateOnes := late.since(before)
	r.check("notifications/cancelled", errors.Is(err, context.DeadlineExceeded) && len(lateOnes) == 0 && text(after) == "after cancel",
		"call ended after %v, no response in the 200ms after the cancel (%d late), the next call was served", time.Since(t0).Round(time.Millisecond)-200*time.Millisecond, len(lateOnes))

	// bad line, then the reader goes on
	before = late.len()
	_ = lt.Notify(ctx, &client.Outgoing{Body: []byte(`hello`)})
	res, _ = c.CallTool(ctx, "echo", map[string]string{"text": "still here"}, nil)
	var pe struct {
		ID    json.RawMessage  `json:"id"`
		Error *client.RPCError `json:"error"`
	}
	for _, m := range late.since(before) {
		_ = json.Unmarshal(m, &pe)
	}
	r.check("bad line -> -32700, reader goes on", pe.Error != nil && pe.Error.Code == -32700 && pe.ID == nil && text(res) == "still here", "%v", errOr(pe.Error))

	// panic
	_, err = c.CallTool(ctx, "panic", map[string]any{}, nil)
	r.check("handler panic -> -32603", rpcCode(err) == -32603, "%v", err)

	// missing _meta: every request must carry its own (META-03)
	err = rawCall(ctx, lt, `"nometa"`, `{"jsonrpc":"2.0","id":"nometa","method":"tools/list","params":{}}`)
	r.check("missing _meta -> -32602", rpcCode(err) == -32602, "%v", err)

	// big result
	res, err = c.CallTool(ctx, "big", map[string]int{"bytes": 1 << 20}, nil)
	r.check("big 1 MiB result", err == nil && len(res.Text()) == 1<<20, "%d bytes %v", len(text(res)), errOr(err))

	// resource template
	contents, err := c.ReadResource(ctx, "test://template/42/data")
	r.check("resources/read template", err == nil && len(contents) == 1 && strings.Contains(contents[0].Text, "42"), "%.80s %v", firstText(contents), errOr(err))

	// removed method
	_, err = c.Call(ctx, "ping", nil, nil)
	r.check("removed method ping -> -32601", rpcCode(err) == -32601, "%v", err)

	// load
	n, lat := load(ctx, c, opt.Load, opt.Window)
	if n > 0 {
		slices.Sort(lat)
		p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
		r.check("load: echo, window "+fmt.Sprint(opt.Window), true, "%d calls in %v = %.0f calls/s; latency p50 %v p99 %v max %v",
			n, opt.Load, float64(n)/opt.Load.Seconds(), p(0.50), p(0.99), lat[len(lat)-1])
	} else {
		r.check("load", false, "no call completed")
	}

	// graceful stop: Close runs the STD-11 sequence and reports a server
	// that needed a signal.
	t0 = time.Now()
	err = c.Close()
	r.check("stdin closed -> exit", err == nil, "exited in %v %v", time.Since(t0).Round(time.Millisecond), errOr(err))
	if n := stderrBytes.Load(); n > 0 {
		fmt.Fprintf(opt.Out, "  server stderr: %d bytes (logs only; stdout carried protocol messages only)\n", n)
	}
	fmt.Fprintf(opt.Out, "mcpwire demo: %d checks ok, %d not ok\n", r.passed, r.failed)
	if r.failed > 0 {
		return fmt.Errorf("demo: %d checks failed", r.failed)
	}
	return nil
}

// rawCall sends a hand-written request through the transport and returns
// the server's error, if any.
func rawCall(ctx context.Context, t client.Transport, id, line string) error {
	ex, err := t.Open(ctx, &client.Outgoing{ID: []byte(id), Method: "tools/list", Body: []byte(line)})
	if err != nil {
		return err
	}
	defer ex.Close()
	msg, err := ex.Next(ctx)
	if err != nil {
		return err
	}
	var m struct {
		Error *client.RPCError `json:"error"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return err
	}
	if m.Error != nil {
		return m.Error
	}
	return nil
}

// load keeps window echo calls in flight for d and returns the number of
// completed calls and their latencies.
func load(ctx context.Context, c *client.Client, d time.Duration, window int) (int, []time.Duration) {
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	lat := make([]time.Duration, 0, 1<<16)
	var wg sync.WaitGroup
	for range window {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				res, err := c.CallTool(ctx, "echo", map[string]string{"text": "load"}, nil)
				if err != nil || res.Text() != "load" {
					break
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return len(lat), lat
}

func rpcCode(err error) int {
	var re *client.RPCError
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

func errOr(err error) string {
	if err == nil {
		return ""
	}
	return "(" + err.Error() + ")"
}

func text(r *mcp.ToolResult) string {
	if r == nil {
		return ""
	}
	return r.Text()
}

func firstText(c []mcp.ResourceContents) string {
	if len(c) == 0 {
		return ""
	}
	return c[0].Text
}
