package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Options configures Run.
type Options struct {
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

// Run starts the server, exercises it end to end, runs a short load, stops
// it, and prints what happened. It returns an error when any check failed.
func Run(ctx context.Context, opt Options) error {
	if opt.Load <= 0 {
		opt.Load = 2 * time.Second
	}
	if opt.Window <= 0 {
		opt.Window = 32
	}
	r := &report{out: opt.Out}
	fmt.Fprintf(opt.Out, "mcpwire demo: starting %s\n", strings.Join(opt.Server, " "))
	c, err := start(opt.Server[0], opt.Server[1:]...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second+opt.Load)
	defer cancel()

	// server/discover
	if m, err := c.call(ctx, "server/discover", "", ""); err == nil && m.Result != nil {
		var d struct {
			SupportedVersions []string        `json:"supportedVersions"`
			Capabilities      json.RawMessage `json:"capabilities"`
		}
		_ = json.Unmarshal(m.Result, &d)
		r.check("server/discover", slices.Contains(d.SupportedVersions, "2026-07-28"), "versions %v, capabilities %s", d.SupportedVersions, d.Capabilities)
	} else {
		r.check("server/discover", false, "%v %v", err, errText(m))
	}

	// tools/list
	if m, err := c.call(ctx, "tools/list", "", ""); err == nil && m.Result != nil {
		var l struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		_ = json.Unmarshal(m.Result, &l)
		r.check("tools/list", len(l.Tools) > 0, "%d tools", len(l.Tools))
	} else {
		r.check("tools/list", false, "%v %v", err, errText(m))
	}

	// echo with non-ASCII text
	const hello = "hello, 世界"
	m, err := c.call(ctx, "tools/call", `"name":"echo","arguments":{"text":"`+hello+`"}`, "")
	r.check("tools/call echo", err == nil && text(m) == hello, "-> %q", text(m))

	// progress
	m, err = c.call(ctx, "tools/call", `"name":"sleep","arguments":{"ms":300,"steps":5}`, `,"progressToken":"p1"`)
	prog := c.notifications("notifications/progress")
	r.check("progress (sleep 300ms, 5 steps)", err == nil && m.Error == nil && len(prog) > 0 && len(prog) <= 5,
		"%d progress notifications before the result", len(prog))

	// cancellation
	id, ch, _ := c.send("tools/call", `"name":"sleep","arguments":{"ms":10000}`, "")
	time.Sleep(50 * time.Millisecond)
	t0 := time.Now()
	_ = c.raw(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"demo"}}`)
	after, _ := c.call(ctx, "tools/call", `"name":"echo","arguments":{"text":"after cancel"}`, "")
	select {
	case late := <-ch:
		r.check("notifications/cancelled", false, "a response arrived after the cancel: %s", late.Result)
	case <-time.After(200 * time.Millisecond):
		r.check("notifications/cancelled", text(after) == "after cancel", "no response in the %v after the cancel; the next call was served", time.Since(t0).Round(time.Millisecond))
	}

	// bad line, then the reader goes on
	before := len(c.noID)
	_ = c.raw(`hello`)
	m, _ = c.call(ctx, "tools/call", `"name":"echo","arguments":{"text":"still here"}`, "")
	c.mu.Lock()
	var pe *Message
	if len(c.noID) > before {
		pe = c.noID[before]
	}
	c.mu.Unlock()
	r.check("bad line -> -32700, reader goes on", pe != nil && pe.Error != nil && pe.Error.Code == -32700 && text(m) == "still here", "%s", errText(pe))

	// panic
	m, err = c.call(ctx, "tools/call", `"name":"panic","arguments":{}`, "")
	r.check("handler panic -> -32603", err == nil && m.Error != nil && m.Error.Code == -32603, "%s", errText(m))

	// missing _meta: every request must carry its own (META-03)
	m, err = c.rawCall(ctx, `"nometa"`, `{"jsonrpc":"2.0","id":"nometa","method":"tools/list","params":{}}`)
	r.check("missing _meta -> -32602", err == nil && m.Error != nil && m.Error.Code == -32602, "%s", errText(m))

	// big result
	m, err = c.call(ctx, "tools/call", `"name":"big","arguments":{"bytes":1048576}`, "")
	r.check("big 1 MiB result", err == nil && len(text(m)) == 1<<20, "%d bytes", len(text(m)))

	// resource template
	m, err = c.call(ctx, "resources/read", `"uri":"test://template/42/data"`, "")
	r.check("resources/read template", err == nil && strings.Contains(string(m.Result), "42"), "%.80s", result(m))

	// removed method
	m, err = c.call(ctx, "ping", "", "")
	r.check("removed method ping -> -32601", err == nil && m.Error != nil && m.Error.Code == -32601, "%s", errText(m))

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

	// graceful stop
	took, err := c.stop(5 * time.Second)
	r.check("stdin closed -> exit 0", err == nil, "exited in %v (%v)", took.Round(time.Millisecond), err)
	if s := c.stderr.String(); s != "" {
		fmt.Fprintf(opt.Out, "  server stderr: %d bytes (logs only; stdout carried protocol messages only)\n", len(s))
	}
	fmt.Fprintf(opt.Out, "mcpwire demo: %d checks ok, %d not ok\n", r.passed, r.failed)
	if r.failed > 0 {
		return fmt.Errorf("demo: %d checks failed", r.failed)
	}
	return nil
}

// load keeps window echo calls in flight for d and returns the number of
// completed calls and their latencies.
func load(ctx context.Context, c *client, d time.Duration, window int) (int, []time.Duration) {
	type inflight struct {
		ch chan *Message
		t0 time.Time
	}
	deadline := time.Now().Add(d)
	q := make(chan inflight, window)
	lat := make([]time.Duration, 0, 1<<16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for f := range q {
			select {
			case <-f.ch:
				lat = append(lat, time.Since(f.t0))
			case <-ctx.Done():
				return
			}
		}
	}()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		t0 := time.Now()
		_, ch, err := c.send("tools/call", `"name":"echo","arguments":{"text":"load"}`, "")
		if err != nil {
			break
		}
		q <- inflight{ch, t0}
	}
	close(q)
	<-done
	return len(lat), lat
}

func result(m *Message) string {
	if m == nil {
		return "no response"
	}
	return string(m.Result)
}

func text(m *Message) string {
	if m == nil || m.Result == nil {
		return ""
	}
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	_ = json.Unmarshal(m.Result, &r)
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

func errText(m *Message) string {
	if m == nil || m.Error == nil {
		return ""
	}
	return fmt.Sprintf("error %d %q", m.Error.Code, m.Error.Message)
}
