package streamhttp

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/engine"

	"github.com/mcpwire/mcpwire/internal/fixture"
)

// TestContentTypeOWS pins the rule FuzzContentType holds isJSONType to, on
// both front ends alike (HTTP-09, B15): the media type is trimmed of RFC 9110
// OWS (SP and HTAB, §5.6.3) and nothing else. A form feed or vertical tab
// next to "application/json" is not whitespace there: on the wire both HTTP
// parsers refuse the control character themselves (400, the handler never
// runs); SP/HTAB around the type and parameters after it are JSON.
func TestContentTypeOWS(t *testing.T) {
	cases := []struct {
		ctype  string
		status int
	}{
		{"AppliCAtion/json\f", 400}, // the input FuzzContentType found (corpus: rfc9110_ows_formfeed)
		{"\vapplication/json", 400},
		{"application/json\f; charset=utf-8", 400},
		{"text/json", 415},
		{"application/json \t", 200},
		{"\tAPPLICATION/JSON ; charset=utf-8", 200},
	}
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		h := startHarness(t, fe, Config{}, defaultOptions())
		for i, c := range cases {
			runs := h.fx.SQLRuns.Load()
			before := h.srv.Stats().BadContentType.Load()
			resp, body := h.do(t, request{hdr: setHdr(ex2Hdr(), "Content-Type", "Content-Type: "+c.ctype), body: fixture.Ex2Body})
			if resp.StatusCode != c.status {
				t.Fatalf("#%d %q: status %d, want %d; body %q", i, c.ctype, resp.StatusCode, c.status, fixture.Trunc(body))
			}
			ran := h.fx.SQLRuns.Load() - runs
			bad := h.srv.Stats().BadContentType.Load() - before
			switch c.status {
			case 400: // the HTTP parser's own answer, before the binding
				if ran != 0 || bad != 0 {
					t.Errorf("#%d %q: handler ran %d times, BadContentType +%d; want 0 and 0", i, c.ctype, ran, bad)
				}
			case 415:
				if m := fixture.DecodeMsg(t, body); m.Error == nil || m.Error.Code != -32600 {
					t.Errorf("#%d %q: body %q, want a -32600 error", i, c.ctype, fixture.Trunc(body))
				}
				if ran != 0 || bad != 1 {
					t.Errorf("#%d %q: handler ran %d times, BadContentType +%d; want 0 and 1", i, c.ctype, ran, bad)
				}
			default:
				if ran != 1 || bad != 0 {
					t.Errorf("#%d %q: handler ran %d times, BadContentType +%d; want 1 and 0", i, c.ctype, ran, bad)
				}
			}
		}
	})
}

// TestContentTypeOWSHandler: where no HTTP parser stands in front (a router
// or a test that hands the net/http adapter a built request), the binding's
// own rule answers: a form feed after the type is 415, not JSON.
func TestContentTypeOWSHandler(t *testing.T) {
	leakCheck(t)
	eng := engine.New(defaultOptions())
	fx := fixture.Add(t, eng)
	srv := New(eng, Config{})
	const addr = "127.0.0.1:8080"
	hd, err := srv.Handler(addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ctype  string
		status int
	}{{"AppliCAtion/json\f", 415}, {"application/json\v", 415}, {"application/json\t", 200}} {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(fixture.Ex2Body))
		req.Host = addr
		for _, l := range ex2Hdr() {
			k, v, _ := strings.Cut(l, ":")
			req.Header.Add(k, strings.TrimSpace(v))
		}
		req.Header.Set("Content-Type", c.ctype)
		runs := fx.SQLRuns.Load()
		rec := httptest.NewRecorder()
		hd.ServeHTTP(rec, req)
		if rec.Code != c.status {
			t.Fatalf("%q: status %d, want %d; body %q", c.ctype, rec.Code, c.status, fixture.Trunc(rec.Body.Bytes()))
		}
		if ran := fx.SQLRuns.Load() - runs; (c.status == 200) != (ran == 1) {
			t.Errorf("%q: handler ran %d times", c.ctype, ran)
		}
	}
	if err := srv.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
}
