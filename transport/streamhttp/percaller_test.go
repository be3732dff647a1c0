package streamhttp

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/internal/fixture"
)

// tokenIsPrincipal authenticates every bearer token as the principal it
// names (tests of per-caller isolation only).
func tokenIsPrincipal(_ context.Context, token string) (any, error) {
	if token == "" {
		return nil, nil
	}
	return token, nil
}

// wantLimited checks a per-caller refusal on HTTP: 429, Retry-After, and
// the -32603 body whose data names the limit (F5).
func wantLimited(t *testing.T, status int, retryAfter string, body []byte, limit, wantRetry string) {
	t.Helper()
	if status != 429 || retryAfter != wantRetry {
		t.Fatalf("status %d, Retry-After %q; want 429, %q (%s)", status, retryAfter, wantRetry, body)
	}
	m := fixture.DecodeMsg(t, body)
	if m.Error == nil || m.Error.Code != -32603 || !strings.Contains(string(body), `"limit":"`+limit+`"`) ||
		!strings.Contains(string(body), `"retryAfter":`+wantRetry) {
		t.Fatalf("body %s", body)
	}
}

// TestF5InFlightPerPrincipalHTTP: with one call of alice's in flight
// (MaxInFlightPerPrincipal 1), her second is answered 429 with Retry-After
// on both front ends, counted once, while bob is served; once her call
// ends she is served again.
func TestF5InFlightPerPrincipalHTTP(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		opt := defaultOptions()
		opt.MaxInFlightPerPrincipal = 1
		h := startHarness(t, fe, Config{Authenticate: tokenIsPrincipal}, opt)
		entered, release := make(chan struct{}, 1), make(chan struct{})
		if err := h.eng.AddTool(engine.Tool{Name: "hold", Handler: func(c *engine.Call) error {
			if c.Principal() == "alice" {
				entered <- struct{}{}
				<-release
			}
			c.Text("ok")
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
		call := func(who string) request {
			return request{hdr: mcpHdr("tools/call", "Mcp-Name: hold", "Authorization: Bearer "+who), body: fixture.ToolsCall("7", "hold", "{}")}
		}
		first := make(chan int, 1)
		go func() {
			c := h.dial(t)
			c.write(h.raw(call("alice")))
			resp, err := c.readResponse(30 * time.Second)
			if err != nil {
				first <- 0
				return
			}
			c.readAll(resp)
			first <- resp.StatusCode
		}()
		<-entered
		resp, body := h.do(t, call("alice"))
		wantLimited(t, resp.StatusCode, resp.Header.Get("Retry-After"), body, engine.LimitInFlightPerPrincipal, "1")
		if resp, body := h.do(t, call("bob")); resp.StatusCode != 200 {
			t.Fatalf("bob: %d %s", resp.StatusCode, body)
		}
		close(release)
		if st := <-first; st != 200 {
			t.Fatalf("alice's first call: %d", st)
		}
		if resp, body := h.do(t, call("alice")); resp.StatusCode != 200 {
			t.Fatalf("alice after her call ended: %d %s", resp.StatusCode, body)
		}
		if n := h.eng.LimitStats().InFlightPerPrincipal.Load(); n != 1 {
			t.Fatalf("InFlightPerPrincipal = %d, want 1", n)
		}
	})
}

// TestF5ListensPerPrincipalHTTP: alice's second listen stream is answered
// 429 with Retry-After (MaxListensPerPrincipal 1) while bob opens his;
// once her client has gone (the stream ends at its next keep-alive, C6)
// her slot is back.
func TestF5ListensPerPrincipalHTTP(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		opt := defaultOptions()
		opt.MaxListensPerPrincipal = 1
		h := startHarness(t, fe, Config{Authenticate: tokenIsPrincipal, KeepAlive: 20 * time.Millisecond}, opt)
		listen := func(who string) request {
			return request{hdr: mcpHdr("subscriptions/listen", "Authorization: Bearer "+who), body: fixture.Ex8Body}
		}
		open := func(who string) *client {
			t.Helper()
			c := h.dial(t)
			c.write(h.raw(listen(who)))
			resp, err := c.readResponse(5 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			checkSSEHead(t, resp)
			if it := readSSE(t, c, resp).nextEvent(5 * time.Second); it.err != nil || !strings.Contains(it.data, "subscriptions/acknowledged") {
				t.Fatalf("%s's listen: %+v", who, it)
			}
			return c
		}
		first := open("alice")
		resp, body := h.do(t, listen("alice"))
		wantLimited(t, resp.StatusCode, resp.Header.Get("Retry-After"), body, engine.LimitListenPerPrincipal, "1")
		open("bob")
		if n := h.eng.LimitStats().ListenPerPrincipal.Load(); n != 1 {
			t.Fatalf("ListenPerPrincipal = %d, want 1", n)
		}
		_ = first.conn.Close()
		for deadline := time.Now().Add(5 * time.Second); ; { // a bound, not a speed goal
			c := h.dial(t)
			c.write(h.raw(listen("alice")))
			resp, err := c.readResponse(5 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			_ = c.conn.Close()
			if resp.StatusCode == 200 {
				break
			}
			if resp.StatusCode != 429 || time.Now().After(deadline) {
				t.Fatalf("alice's slot not given back after her client left: %d", resp.StatusCode)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// TestF5RatePerPrincipalHTTP: past its burst a principal gets 429 with
// the seconds until its next token as Retry-After; another principal is
// served; anonymous clients on loopback name no caller and are not
// limited (callerKey).
func TestF5RatePerPrincipalHTTP(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		opt := defaultOptions()
		opt.RatePerPrincipal, opt.RateBurst = 0.01, 2 // a token per 100 s
		h := startHarness(t, fe, Config{Authenticate: tokenIsPrincipal}, opt)
		if err := h.eng.AddTool(engine.Tool{Name: "quick", Inline: true, Handler: func(c *engine.Call) error { c.Text("ok"); return nil }}); err != nil {
			t.Fatal(err)
		}
		call := func(who string) request {
			hdr := mcpHdr("tools/call", "Mcp-Name: quick")
			if who != "" {
				hdr = append(hdr, "Authorization: Bearer "+who)
			}
			return request{hdr: hdr, body: fixture.ToolsCall("7", "quick", "{}")}
		}
		for _, who := range []string{"alice", "alice", "bob", "", "", "", ""} {
			if resp, body := h.do(t, call(who)); resp.StatusCode != 200 {
				t.Fatalf("%q within the burst: %d %s", who, resp.StatusCode, body)
			}
		}
		resp, body := h.do(t, call("alice"))
		wantLimited(t, resp.StatusCode, resp.Header.Get("Retry-After"), body, engine.LimitRatePerPrincipal, "100")
		if resp, body := h.do(t, call("bob")); resp.StatusCode != 200 {
			t.Fatalf("bob: %d %s", resp.StatusCode, body)
		}
		if n := h.eng.LimitStats().RatePerPrincipal.Load(); n != 1 {
			t.Fatalf("RatePerPrincipal = %d, want 1", n)
		}
	})
}

// TestCallerKey: an anonymous HTTP caller is named by its client IP (raw,
// as the connection limits keep it, or text), except loopback (IPv4, IPv6,
// IPv4-mapped) and addresses that are no IP.
func TestCallerKey(t *testing.T) {
	ip16 := func(s string) string { return string(net.ParseIP(s).To16()) }
	for i, tc := range []struct{ ip, want string }{
		{ip16("192.0.2.7"), ip16("192.0.2.7")},
		{ip16("2001:db8::1"), ip16("2001:db8::1")},
		{ip16("127.0.0.1"), ""},
		{ip16("127.3.4.5"), ""},
		{ip16("::1"), ""},
		{string(net.ParseIP("192.0.2.7").To4()), string(net.ParseIP("192.0.2.7").To4())},
		{string(net.ParseIP("127.0.0.1").To4()), ""},
		{"@", ""},
		{"", ""},
	} {
		if got := callerKey(tc.ip); got != tc.want {
			t.Errorf("%d: callerKey(%q) = %q, want %q", i, tc.ip, got, tc.want)
		}
	}
	for i, tc := range []struct{ host, want string }{
		{"192.0.2.7", "192.0.2.7"}, {"2001:db8::1", "2001:db8::1"},
		{"127.0.0.1", ""}, {"::1", ""}, {"::ffff:127.0.0.1", ""}, {"not-an-ip", ""},
	} {
		if got := textCallerKey(tc.host); got != tc.want {
			t.Errorf("%d: textCallerKey(%q) = %q, want %q", i, tc.host, got, tc.want)
		}
	}
}

// TestF5AnonymousByClientIP: without an authenticator the per-caller
// limits key a client by its IP — here the clients a trusted proxy's
// PROXY headers name: one client past its burst is refused (429,
// Retry-After) while another client through the same proxy is served.
func TestF5AnonymousByClientIP(t *testing.T) {
	forEachFrontEnd(t, func(t *testing.T, fe frontEnd) {
		if fe == netFE && plainAdapter {
			t.Skip("the PROXY header needs NetListener")
		}
		opt := defaultOptions()
		opt.RatePerPrincipal, opt.RateBurst = 0.01, 1
		cfg := Config{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
		h := startHarness(t, fe, cfg, opt)
		from := func(ip string) *client {
			return dialProxied(t, h, "PROXY TCP4 "+ip+" 127.0.0.1 5000 80\r\n")
		}
		a := from("192.0.2.1")
		if resp, body := a.roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body}); resp.StatusCode != 200 {
			t.Fatalf("first call: %d %s", resp.StatusCode, body)
		}
		resp, body := from("192.0.2.1").roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body})
		wantLimited(t, resp.StatusCode, resp.Header.Get("Retry-After"), body, engine.LimitRatePerPrincipal, "100")
		if resp, body := from("192.0.2.2").roundTrip(h, request{hdr: ex2Hdr(), body: fixture.Ex2Body}); resp.StatusCode != 200 {
			t.Fatalf("another client: %d %s", resp.StatusCode, body)
		}
		if n := h.eng.LimitStats().RatePerPrincipal.Load(); n != 1 {
			t.Fatalf("RatePerPrincipal = %d, want 1", n)
		}
	})
}
