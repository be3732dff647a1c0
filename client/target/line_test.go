package target_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/target"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/refserver"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/stdio"
	"go.uber.org/goleak"
)

// childEnv makes the test binary a stdio server (the reference fixtures
// plus a "crash" tool that exits the process, and a stray line on stdout
// when its value is "stray").
const childEnv = "MCPWIRE_CLIENT_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	goleak.VerifyTestMain(m,
		// gnet's package-level worker pool lives for the process.
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).purgeStaleWorkers"),
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*poolCommon).ticktock"),
		goleak.IgnoreAnyFunction("github.com/panjf2000/ants/v2.(*goWorker).run.func1"),
		// fasthttp (the HTTP benchmark's server): the worker-pool cleaner
		// outlives Shutdown by up to 10 s; the Date refresher lives for the
		// process.
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"))
}

func newRef(tb testing.TB) *engine.Server {
	srv, err := refserver.New(refserver.Config{ProgressInterval: -1})
	if err != nil {
		tb.Fatal(err)
	}
	_ = srv.AddTool(engine.Tool{Name: "crash", Handler: func(c *engine.Call) error {
		os.Exit(3)
		return nil
	}})
	return srv
}

func runChild(mode string) int {
	srv := newRef(nil)
	if mode == "catalog" {
		srv = newCatalog()
	}
	if mode == "stray" {
		// Not protocol: the client must skip it (counted), never fail.
		os.Stdout.WriteString("this is not JSON\n")
	}
	if err := stdio.Serve(context.Background(), srv, stdio.Config{}); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// stdioTarget is the target string that re-runs this test binary as a
// stdio server.
func stdioTarget(t *testing.T, mode string) string {
	t.Setenv(childEnv, mode)
	return "stdio:'" + os.Args[0] + "'"
}

func startSocket(t *testing.T, network string) string {
	srv := newRef(t)
	s := socket.New(srv, socket.Config{})
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "mcp.sock")
	}
	if err := s.Listen(network, addr); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		_ = srv.Shutdown(ctx)
	})
	if network == "unix" {
		return "unix://" + addr
	}
	return "tcp://" + s.Addrs()[0].String()
}

func open(t *testing.T, tgt string, o target.Config) *client.Client {
	t.Helper()
	if o.Logger == nil {
		o.Logger = quiet()
	}
	o.StopWait = 2 * time.Second
	c, err := target.Open(tgt, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// lineTargets are the line transports, each with a fresh server.
func lineTargets(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"stdio": func(t *testing.T) string { return stdioTarget(t, "plain") },
		"tcp":   func(t *testing.T) string { return startSocket(t, "tcp") },
		"unix":  func(t *testing.T) string { return startSocket(t, "unix") },
	}
}

// TestLineClient runs the common API on stdio, TCP and Unix sockets
// against the reference server (META-02, PROG-*, MRTR-05, SUB-03/05).
func TestLineClient(t *testing.T) {
	for name, mk := range lineTargets(t) {
		t.Run(name, func(t *testing.T) {
			c := open(t, mk(t), target.Config{Client: client.Config{
				OnInput: answerInputs,
			}})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			exerciseClient(ctx, t, c)
		})
	}
}

// answerInputs answers the reference server's MRTR fixtures.
func answerInputs(ctx context.Context, key string, r mcp.InputRequest) (json.RawMessage, error) {
	switch r.Method {
	case "elicitation/create":
		return json.RawMessage(`{"action":"accept","content":{"name":"tester","color":"blue","confirmed":true,"username":"tester"}}`), nil
	case "sampling/createMessage":
		return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"sampled"},"model":"test-model","stopReason":"endTurn"}`), nil
	case "roots/list":
		return json.RawMessage(`{"roots":[{"uri":"file:///tmp","name":"tmp"}]}`), nil
	}
	return nil, fmt.Errorf("unexpected input request %s", r.Method)
}

func exerciseClient(ctx context.Context, t *testing.T, c *client.Client) {
	t.Helper()
	d, err := c.Probe(ctx)
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if c.Era() != client.EraModern || c.ProtocolVersion() != client.Version2026 {
		t.Fatalf("era %s version %s, want modern 2026-07-28", c.Era(), c.ProtocolVersion())
	}
	if d.Info.Name != refserver.ServerName {
		t.Fatalf("server name %q", d.Info.Name)
	}

	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"echo", "test_tool_with_progress", "test_x_mcp_header"} {
		if !names[want] {
			t.Fatalf("tools/list lacks %s (got %d tools)", want, len(tools))
		}
	}

	res, err := c.CallTool(ctx, "echo", map[string]string{"text": "hello world"}, nil)
	if err != nil || res.Text() != "hello world" {
		t.Fatalf("echo: %v %+v", err, res)
	}

	var progress []client.Progress
	res, err = c.CallTool(ctx, "test_tool_with_progress", nil, &client.CallOptions{
		OnProgress: func(p client.Progress) { progress = append(progress, p) }})
	if err != nil || res.IsError {
		t.Fatalf("progress tool: %v %+v", err, res)
	}
	if len(progress) != 3 || progress[2].Progress != 100 {
		t.Fatalf("progress notifications %+v, want 0, 50, 100", progress)
	}

	// MRTR: inputs answered through OnInput, requestState echoed.
	res, err = c.CallTool(ctx, "test_input_required_result_request_state", nil, nil)
	if err != nil || !strings.Contains(res.Text(), "state-ok") {
		t.Fatalf("request_state: %v %+v", err, res)
	}
	res, err = c.CallTool(ctx, "test_input_required_result_multi_round", nil, nil)
	if err != nil || res.IsError {
		t.Fatalf("multi_round: %v %+v", err, res)
	}

	contents, err := c.ReadResource(ctx, "test://static-text")
	if err != nil || len(contents) != 1 || contents[0].Text == "" {
		t.Fatalf("resources/read: %v %+v", err, contents)
	}
	msgs, err := c.GetPrompt(ctx, "test_prompt_with_arguments", map[string]string{"arg1": "A1", "arg2": "B2"})
	if err != nil || len(msgs) == 0 || !strings.Contains(msgs[0].Content.Text, "A1") {
		t.Fatalf("prompts/get: %v %+v", err, msgs)
	}

	// A JSON-RPC error comes back typed.
	_, err = c.CallTool(ctx, "no_such_tool", nil, nil)
	var re *client.RPCError
	if !errors.As(err, &re) || re.Code != -32602 {
		t.Fatalf("unknown tool: %v", err)
	}

	// Two listen streams at once, each acknowledged, each tagged.
	s1, err := c.Listen(ctx, client.Filter{ToolsListChanged: true})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer s1.Close()
	s2, err := c.Listen(ctx, client.Filter{PromptsListChanged: true})
	if err != nil {
		t.Fatalf("listen 2: %v", err)
	}
	defer s2.Close()
	for _, s := range []*client.Subscription{s1, s2} {
		if e := <-s.Events(); e.Kind != client.EventAcknowledged {
			t.Fatalf("first event %+v, want the acknowledgement", e)
		}
	}
	if _, err := c.CallTool(ctx, "test_trigger_tool_change", nil, nil); err != nil {
		t.Fatalf("trigger: %v", err)
	}
	select {
	case e := <-s1.Events():
		if e.Kind != client.EventNotification || e.Method != "notifications/tools/list_changed" {
			t.Fatalf("event %+v", e)
		}
	case <-ctx.Done():
		t.Fatal("no tools/list_changed on the listen stream")
	}
	select {
	case e := <-s2.Events():
		t.Fatalf("prompts-only stream got %+v (SUB-02)", e)
	case <-time.After(50 * time.Millisecond):
	}

	// Cancellation by context: the call ends at once and the connection
	// goes on serving.
	cctx, ccancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = c.CallTool(cctx, "sleep", map[string]any{"ms": 5000}, nil)
	ccancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled call: %v", err)
	}
	if res, err := c.CallTool(ctx, "echo", map[string]string{"text": "after"}, nil); err != nil || res.Text() != "after" {
		t.Fatalf("echo after cancel: %v", err)
	}
}

// TestStdioCrashRestart kills the stdio server in the middle of a call and
// of a listen stream: the client restarts it, re-sends the call the caller
// marked Resend, and re-listens (STD-14, SUB-12).
func TestStdioCrashRestart(t *testing.T) {
	tgt := stdioTarget(t, "plain")
	c := open(t, tgt, target.Config{Line: client.LineConfig{MinBackoff: 10 * time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub, err := c.Listen(ctx, client.Filter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	<-sub.Events() // acknowledgement

	slow := make(chan error, 1)
	var slowText atomic.Value
	go func() {
		res, err := c.CallTool(ctx, "sleep", map[string]any{"ms": 300}, &client.CallOptions{Resend: true})
		if err == nil {
			slowText.Store(res.Text())
		}
		slow <- err
	}()
	time.Sleep(50 * time.Millisecond) // the sleep call is in flight
	_, err = c.CallTool(ctx, "crash", nil, &client.CallOptions{NoRetry: true})
	if !errors.Is(err, client.ErrDropped) {
		t.Fatalf("crash call: %v, want ErrDropped", err)
	}
	if err := <-slow; err != nil {
		t.Fatalf("the in-flight call was not re-sent after the restart: %v", err)
	}
	select {
	case e := <-sub.Events():
		if e.Kind != client.EventRelistened {
			t.Fatalf("event %+v, want EventRelistened", e)
		}
	case <-ctx.Done():
		t.Fatal("listen stream not re-opened")
	}
	if _, err := c.CallTool(ctx, "test_trigger_tool_change", nil, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-sub.Events():
		if e.Method != "notifications/tools/list_changed" {
			t.Fatalf("event %+v", e)
		}
	case <-ctx.Done():
		t.Fatal("no notification on the re-opened stream")
	}
}

// TestStdioStrayLine: a non-JSON line on the server's stdout is counted
// and skipped, never fatal.
func TestStdioStrayLine(t *testing.T) {
	tgt := stdioTarget(t, "stray")
	c := open(t, tgt, target.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, "echo", map[string]string{"text": "ok"}, nil)
	if err != nil || res.Text() != "ok" {
		t.Fatalf("echo: %v", err)
	}
}
