package legacy_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/legacy"
)

// FuzzSessionHeaders sends the legacy endpoint's handler, with no HTTP
// parser in front (a router may hand it any value), arbitrary
// Mcp-Session-Id and Mcp-Protocol-Version headers on POST, GET and DELETE.
// It never panics; only the session's own id, byte for byte, reaches the
// session (a near miss, another case, padding or a prefix is 400 or 404,
// never served: E8, E3); with the right id, an unsupported
// Mcp-Protocol-Version is 400; and no request with another id ends or
// changes the session, which still answers afterwards.
func FuzzSessionHeaders(f *testing.F) {
	eng := engine.New(engine.Config{Name: "legacy-fuzz", Version: "1"})
	leg := legacy.New(eng, legacy.Config{})
	h := leg.Handler()
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = leg.Shutdown(ctx)
		_ = eng.Shutdown(ctx)
	})
	serve := func(method, sid, version, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, legacyPath, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "\x00none" {
			req.Header[legacy.HeaderSession] = []string{sid}
		}
		if version != "" {
			req.Header[legacy.HeaderProtocol] = []string{version}
		}
		ctx, cancel := context.WithTimeout(req.Context(), 2*time.Second) // a GET stream ends here
		defer cancel()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req.WithContext(ctx))
		return rec
	}
	init := serve("POST", "\x00none", "", initBody)
	sid := init.Header().Get(legacy.HeaderSession)
	if init.Code != 200 || sid == "" {
		f.Fatalf("initialize: %d %q", init.Code, init.Body.String())
	}
	if rec := serve("POST", sid, "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); rec.Code != 202 {
		f.Fatalf("notifications/initialized: %d", rec.Code)
	}
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	for _, s := range []string{sid, strings.ToUpper(sid), sid[:len(sid)-1], sid + "=", " " + sid, sid + "\x00", "", "\x00none", "AAAAAAAAAAAAAAAAAAAAAA", "..", "%00"} {
		for _, v := range []string{"", "2025-11-25", "2025-03-26", "2026-07-28", "2025-11-25 ", "x"} {
			f.Add(s, v, uint8(0))
		}
	}
	f.Add(sid, "", uint8(2))
	f.Fuzz(func(t *testing.T, id, version string, m uint8) {
		method := [...]string{"POST", "GET", "DELETE"}[m%3]
		body := ""
		if method == "POST" {
			body = list
		}
		own := id == sid
		if own && method == "DELETE" {
			return // ending the session is not what this target checks
		}
		if own && method == "GET" {
			return // a stream held open until the context ends: slow, and not a header parse
		}
		rec := serve(method, id, version, body)
		switch {
		case !own && rec.Code < 400:
			t.Fatalf("%s with Mcp-Session-Id %q (the session is %q): %d %q", method, id, sid, rec.Code, rec.Body.String())
		case own && version != "" && !slices.Contains(legacy.Versions, version) && rec.Code != 400:
			t.Fatalf("Mcp-Protocol-Version %q: %d, want 400", version, rec.Code)
		case own && (version == "" || slices.Contains(legacy.Versions, version)) && rec.Code != 200:
			t.Fatalf("the session's own id with version %q: %d %q", version, rec.Code, rec.Body.String())
		}
		if !own {
			if rec := serve("POST", sid, "2025-11-25", list); rec.Code != 200 {
				t.Fatalf("after %s with Mcp-Session-Id %q the session answers %d %q", method, id, rec.Code, rec.Body.String())
			}
		}
	})
}
