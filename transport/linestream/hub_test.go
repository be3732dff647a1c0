package linestream

import (
	"github.com/mcpwire/mcpwire/engine"

	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func listenReq(id any, filter string) string {
	return req(id, "subscriptions/listen", `"notifications":`+filter)
}

func subID(t *testing.T, m wireMsg) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return string(p.Meta["io.modelcontextprotocol/subscriptionId"])
}

func TestListen(t *testing.T) { // SUB-01..10, META-07
	s, sc, out := newConn(t, engine.Config{})
	_ = s.AddResource(engine.Resource{URI: "file:///a", Name: "a", Handler: func(c *engine.Call, uri string, _ map[string]string) error { return nil }})
	feed(t, sc, listenReq("L", `{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["file:///a"]}`))
	feed(t, sc, listenReq(5, `{"resourcesListChanged":true}`))
	ack := out.wait(t, "ack", func(m wireMsg) bool {
		return m.Method == "notifications/subscriptions/acknowledged" && subID(t, m) == `"L"`
	})
	// The server has no prompts: promptsListChanged is left out (SUB-03).
	if !strings.Contains(string(ack.Params), `"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}`) {
		t.Fatalf("ack: %s", ack.raw)
	}
	out.wait(t, "ack 5", func(m wireMsg) bool {
		return m.Method == "notifications/subscriptions/acknowledged" && subID(t, m) == `5`
	})
	waitFor(t, "both subscribed", func() bool { return s.Stats().ListenStreams.Load() == 2 })

	_ = s.AddTool(engine.Tool{Name: "new", Handler: func(c *engine.Call) error { c.Text("x"); return nil }})
	s.ResourceUpdated("file:///a/child")
	s.ResourceUpdated("file:///ab") // not a sub-resource of file:///a
	_ = s.AddResource(engine.Resource{URI: "file:///b", Name: "b", Handler: func(c *engine.Call, uri string, _ map[string]string) error { return nil }})

	out.wait(t, "tools list_changed", func(m wireMsg) bool {
		return m.Method == "notifications/tools/list_changed" && subID(t, m) == `"L"`
	})
	upd := out.wait(t, "updated", func(m wireMsg) bool { return m.Method == "notifications/resources/updated" })
	if subID(t, upd) != `"L"` || !strings.Contains(string(upd.Params), `"uri":"file:///a/child"`) {
		t.Fatalf("updated: %s", upd.raw)
	}
	out.wait(t, "resources list_changed", func(m wireMsg) bool {
		return m.Method == "notifications/resources/list_changed" && subID(t, m) == `5`
	})
	for _, f := range out.all() {
		m := decode(t, f)
		if m.Method == "notifications/tools/list_changed" && subID(t, m) == "5" {
			t.Fatalf("filter not honoured (SUB-02): %s", f)
		}
		if strings.Contains(f, "file:///ab") {
			t.Fatalf("update for an unsubscribed URI: %s", f)
		}
	}

	// The client ends subscription 5: no response for it (SUB-09).
	feed(t, sc, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	waitFor(t, "one stream left", func() bool { return s.Stats().ListenStreams.Load() == 1 })

	// engine.Server shutdown completes "L" with a final result (SUB-10).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	fin := out.response(t, `"L"`)
	if !strings.Contains(string(fin.Result), `"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"L","io.modelcontextprotocol/serverInfo":`) {
		t.Fatalf("final result: %s", fin.raw)
	}
	for _, f := range out.all() {
		if m := decode(t, f); m.Method == "" && string(m.ID) == "5" {
			t.Fatalf("cancelled subscription answered: %s", f)
		}
	}
}

func TestListenAckFirstAndDrain(t *testing.T) {
	s, sc, out := newConn(t, engine.Config{})
	feed(t, sc, listenReq(1, `{"toolsListChanged":true}`))
	waitFor(t, "subscribed", func() bool { return s.Stats().ListenStreams.Load() == 1 })
	_ = s.AddTool(engine.Tool{Name: "x", Handler: func(c *engine.Call) error { return nil }})
	out.wait(t, "change", func(m wireMsg) bool { return m.Method == "notifications/tools/list_changed" })
	frames := out.all()
	if m := decode(t, frames[0]); m.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message for the subscription is not the ack: %v", frames)
	}
	// EOF on the connection: Drain completes listen streams at once.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := sc.Drain(ctx); err != nil {
		t.Fatalf("Drain: %v", err)
	}
	out.response(t, "1")
}

func TestListenBadParams(t *testing.T) {
	_, sc, out := newConn(t, engine.Config{})
	feed(t, sc, req(1, "subscriptions/listen", ""))
	if m := out.response(t, "1"); m.code() != -32602 {
		t.Fatalf("listen without notifications: %s", m.raw)
	}
}

func TestExplicitListChanged(t *testing.T) { // issue 5: publishing API
	s, sc, out := newConn(t, engine.Config{})
	_ = s.AddPrompt(engine.Prompt{Name: "p", Handler: func(c *engine.Call) error { return nil }})
	_ = s.AddResource(engine.Resource{URI: "file:///a", Name: "a", Handler: func(c *engine.Call, uri string, _ map[string]string) error { return nil }})
	feed(t, sc, listenReq(1, `{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true}`))
	waitFor(t, "subscribed", func() bool { return s.Stats().ListenStreams.Load() == 1 })
	s.ToolsChanged()
	s.PromptsChanged()
	s.ResourcesChanged()
	for _, m := range []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"} {
		out.wait(t, m, func(w wireMsg) bool { return w.Method == m && subID(t, w) == "1" })
	}
}

// TestListenRemoveResource: RemoveResource and RemoveResourceTemplate
// reach a listen stream on a line connection as
// notifications/resources/list_changed, once each, and removing what is
// not registered sends nothing.
func TestListenRemoveResource(t *testing.T) {
	s, sc, out := newConn(t, engine.Config{})
	read := func(c *engine.Call, uri string, _ map[string]string) error { return nil }
	_ = s.AddResource(engine.Resource{URI: "file:///a", Name: "a", Handler: read})
	_ = s.AddResourceTemplate(engine.ResourceTemplate{URITemplate: "file:///t/{id}", Name: "t", Handler: read})
	feed(t, sc, listenReq(1, `{"resourcesListChanged":true}`))
	waitFor(t, "subscribed", func() bool { return s.Stats().ListenStreams.Load() == 1 })
	changes := func() int {
		n := 0
		for _, f := range out.all() {
			if decode(t, f).Method == "notifications/resources/list_changed" {
				n++
			}
		}
		return n
	}
	if s.RemoveResource("file:///none") || s.RemoveResourceTemplate("file:///none/{id}") {
		t.Fatal("removed what was never registered")
	}
	if !s.RemoveResource("file:///a") {
		t.Fatal("RemoveResource")
	}
	waitFor(t, "first change", func() bool { return changes() == 1 })
	if !s.RemoveResourceTemplate("file:///t/{id}") {
		t.Fatal("RemoveResourceTemplate")
	}
	waitFor(t, "second change", func() bool { return changes() == 2 })
	time.Sleep(20 * time.Millisecond) // a third, spurious cue would land here
	if n := changes(); n != 2 {
		t.Fatalf("%d list_changed notifications, want 2", n)
	}
}
