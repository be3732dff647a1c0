package streamhttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	mcpclient "github.com/mcpwire/mcpwire/client"
)

// TestRelistenAfterCutInUTF8 (RELIABILITY D4, SUB-12) over HTTP: the
// server acknowledges a listen stream, then the connection is cut in the
// middle of an event, inside a two-byte UTF-8 character. No part of that
// event reaches the subscriber; the client listens again with a new id, is
// acknowledged (EventRelistened) and hears the next notification.
func TestRelistenAfterCutInUTF8(t *testing.T) {
	leakCheck(t)
	const discover = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"d4","version":"1"}}}`
	ack := func(id json.RawMessage) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":%s}}}`, id)
	}
	changed := func(id json.RawMessage, text string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"note":"%s","_meta":{"io.modelcontextprotocol/subscriptionId":%s}}}`, text, id)
	}
	release := make(chan struct{})
	var mu sync.Mutex
	var listenIDs []string
	ps := newProbeServer(t, func(w http.ResponseWriter, r *http.Request, method string, id json.RawMessage) {
		switch method {
		case "server/discover":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, discover)
		case "subscriptions/listen":
			mu.Lock()
			listenIDs = append(listenIDs, string(id))
			n := len(listenIDs)
			mu.Unlock()
			if n == 1 {
				conn, bw, err := w.(http.Hijacker).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				ev := changed(id, "café") // cut after the first byte of "é"
				cut := ev[:strings.Index(ev, "é")+1]
				fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\ndata: %s\n\ndata: %s", ack(id), cut)
				_ = bw.Flush()
				_ = conn.Close()
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\ndata: %s\n\n", ack(id), changed(id, "after"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
	})
	defer close(release)
	tr := dtDial(t, ps.srv.URL+"/mcp", Config{})
	c := mcpclient.New(tr, mcpclient.Config{})
	ctx := dtCtx(t)
	sub, err := c.Listen(ctx, mcpclient.Filter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var kinds []mcpclient.EventKind
	for done := false; !done; {
		select {
		case e, ok := <-sub.Events():
			if !ok {
				t.Fatalf("events ended: %v (so far %v)", sub.Err(), kinds)
			}
			kinds = append(kinds, e.Kind)
			if e.Kind == mcpclient.EventNotification {
				if !strings.Contains(string(e.Params), `"note":"after"`) {
					t.Fatalf("notification %s: a part of the cut event was delivered", e.Params)
				}
				done = true
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no notification after the cut; events %v", kinds)
		}
	}
	want := []mcpclient.EventKind{mcpclient.EventAcknowledged, mcpclient.EventRelistened, mcpclient.EventNotification}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", kinds, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(listenIDs) != 2 || listenIDs[0] == listenIDs[1] {
		t.Errorf("listen request ids %q: want two, the second new (SUB-12)", listenIDs)
	}
}
