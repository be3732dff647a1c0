package legacy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/transport/legacy"
)

// BenchmarkLegacyCall is one tools/call echo through the legacy handler
// (session lookup, the rewrite into a 2026 request, the engine, the result
// rewrite), without the HTTP front end.
func BenchmarkLegacyCall(b *testing.B) {
	t := &testing.T{}
	eng := newEngine(t)
	leg := legacy.New(eng, legacy.Config{})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = leg.Shutdown(ctx)
		_ = eng.Shutdown(ctx)
	}()
	h := leg.Handler()
	req := func(body, sid string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/mcp-2025", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			r.Header.Set(legacy.HeaderSession, sid)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := req(initBody, "")
	sid := w.Header().Get(legacy.HeaderSession)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world"},"_meta":{"progressToken":1}}}`
	if w := req(body, sid); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "hello world") {
		b.Fatalf("%d %s", w.Code, w.Body.String())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req(body, sid)
	}
}
