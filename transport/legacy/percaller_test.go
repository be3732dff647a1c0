package legacy_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// fromIP returns a copy of rg whose client connects from the loopback
// address ip (127.0.0.0/8 is all loopback on Linux), so that the server
// sees another client IP.
func (rg *rig) fromIP(t *testing.T, ip string) *rig {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	c := *rg
	c.client = &http.Client{Transport: tr, Timeout: 10 * time.Second}
	return &c
}

// wantSessionLimit checks an initialize refused by a per-caller session
// bound: 429 with Retry-After and a -32603 error naming the limit.
func wantSessionLimit(t *testing.T, r *reply, limit string) {
	t.Helper()
	if r.status != 429 || r.hdr.Get("Retry-After") != "10" {
		t.Fatalf("initialize: %d, Retry-After %q (%s); want 429 with Retry-After", r.status, r.hdr.Get("Retry-After"), r.raw)
	}
	if e, _ := r.last()["error"].(map[string]any); e == nil || e["code"] != float64(-32603) ||
		!strings.Contains(r.raw, `"limit":"`+limit+`"`) || !strings.Contains(r.raw, `"retryAfter":10`) {
		t.Fatalf("body %s", r.raw)
	}
}

// TestF5SessionsPerCaller: one principal (or one client IP) that has its
// MaxSessionsPerPrincipal (MaxSessionsPerIP) sessions is refused 429,
// counted once, while another principal and another IP still open
// sessions; deleting a session gives the slot back.
func TestF5SessionsPerCaller(t *testing.T) {
	leakCheck(t)
	cfg := legacy.Config{MaxSessionsPerPrincipal: 2, MaxSessionsPerIP: 3, Principal: streamhttp.PrincipalFrom}
	auth := func(_ context.Context, token string) (any, error) {
		if token == "" {
			return nil, nil
		}
		return token, nil
	}
	rg := startRigHTTP(t, newEngine(t), cfg, streamhttp.Config{Authenticate: auth})
	legacy.CountLoopbackIPs(rg.leg) // 127.0.0.1 and 127.0.0.2 are two clients here
	init := func(rg *rig, who string) *reply {
		t.Helper()
		var hdr []string
		if who != "" {
			hdr = append(hdr, "Authorization: Bearer "+who)
		}
		return rg.do(t, "POST", legacyPath, "", initBody, hdr...)
	}
	var alice []string
	for range 2 {
		r := init(rg, "alice")
		if r.status != 200 {
			t.Fatalf("alice: %d %s", r.status, r.raw)
		}
		alice = append(alice, r.hdr.Get(legacy.HeaderSession))
	}
	wantSessionLimit(t, init(rg, "alice"), "sessions_per_principal")
	// Authenticated callers are bounded per principal, not per IP: bob
	// and carol share alice's address and are served.
	for _, who := range []string{"bob", "bob", "carol"} {
		if r := init(rg, who); r.status != 200 {
			t.Fatalf("%s: %d %s", who, r.status, r.raw)
		}
	}
	// Anonymous callers are bounded per client IP.
	for i := range 3 {
		if r := init(rg, ""); r.status != 200 {
			t.Fatalf("anonymous %d: %d %s", i, r.status, r.raw)
		}
	}
	wantSessionLimit(t, init(rg, ""), "sessions_per_ip")
	if r := init(rg.fromIP(t, "127.0.0.2"), ""); r.status != 200 {
		t.Fatalf("an anonymous client of another IP: %d %s", r.status, r.raw)
	}
	if r := rg.do(t, "DELETE", legacyPath, alice[0], "", "Authorization: Bearer alice"); r.status != 200 && r.status != 204 {
		t.Fatalf("DELETE: %d %s", r.status, r.raw)
	}
	if r := init(rg, "alice"); r.status != 200 {
		t.Fatalf("alice after deleting a session: %d %s", r.status, r.raw)
	}
	st := rg.leg.Stats()
	if st.RefusedPerPrincipal.Load() != 1 || st.RefusedPerIP.Load() != 1 || st.Refused.Load() != 0 {
		t.Fatalf("refused per principal %d, per IP %d, process %d; want 1, 1, 0",
			st.RefusedPerPrincipal.Load(), st.RefusedPerIP.Load(), st.Refused.Load())
	}
}

// TestF5SessionsLoopbackNoCaller: a loopback client IP names no caller (a
// reverse proxy on the host brings every client from it, as MIGRATION.md's
// nginx example does), so anonymous sessions from it are not held to
// MaxSessionsPerIP, as the modern endpoint's per-caller limits do not key
// loopback either; MaxSessions still bounds the process.
func TestF5SessionsLoopbackNoCaller(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{MaxSessionsPerIP: 1, MaxSessions: 3})
	for i := range 3 {
		if r := rg.do(t, "POST", legacyPath, "", initBody); r.status != 200 {
			t.Fatalf("anonymous %d through a local proxy: %d %s", i, r.status, r.raw)
		}
	}
	if r := rg.do(t, "POST", legacyPath, "", initBody); r.status != 503 {
		t.Fatalf("past MaxSessions: %d %s, want 503", r.status, r.raw)
	}
	if st := rg.leg.Stats(); st.RefusedPerIP.Load() != 0 || st.Refused.Load() != 1 {
		t.Fatalf("refused per IP %d, process %d; want 0, 1", st.RefusedPerIP.Load(), st.Refused.Load())
	}
}

// TestF5SessionsPerCallerOff: negative bounds are none; an anonymous
// caller is never held to a per-principal bound.
func TestF5SessionsPerCallerOff(t *testing.T) {
	leakCheck(t)
	rg := startRig(t, newEngine(t), legacy.Config{MaxSessionsPerPrincipal: 1, MaxSessionsPerIP: -1})
	for range 3 {
		if r := rg.do(t, "POST", legacyPath, "", initBody); r.status != 200 {
			t.Fatalf("anonymous: %d %s", r.status, r.raw)
		}
	}
}

// TestF5EngineLimitOnLegacy: a legacy request refused by the engine's
// per-caller rate is answered 429 with the Retry-After its error data
// names, as on the modern endpoint; another principal is served.
func TestF5EngineLimitOnLegacy(t *testing.T) {
	leakCheck(t)
	eng := engine.New(engine.Config{Name: "legacy-test", Version: "1", RatePerPrincipal: 0.01, RateBurst: 2})
	if err := eng.AddTool(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error { c.Text("ok"); return nil }}); err != nil {
		t.Fatal(err)
	}
	auth := func(_ context.Context, token string) (any, error) { return token, nil }
	rg := startRigHTTP(t, eng, legacy.Config{Principal: streamhttp.PrincipalFrom}, streamhttp.Config{Authenticate: auth})
	session := func(who string) string {
		r := rg.do(t, "POST", legacyPath, "", initBody, "Authorization: Bearer "+who)
		if r.status != 200 {
			t.Fatalf("initialize: %d %s", r.status, r.raw)
		}
		return r.hdr.Get(legacy.HeaderSession)
	}
	alice, bob := session("alice"), session("bob")
	echo := func(sid, who string) *reply {
		return rg.do(t, "POST", legacyPath, sid, call(2, "echo", `{}`), "Authorization: Bearer "+who)
	}
	for range 2 {
		if r := echo(alice, "alice"); r.status != 200 {
			t.Fatalf("alice within her burst: %d %s", r.status, r.raw)
		}
	}
	r := echo(alice, "alice")
	if r.status != 429 || r.hdr.Get("Retry-After") != "100" || !strings.Contains(r.raw, `"limit":"rate_per_principal"`) {
		t.Fatalf("alice past her burst: %d, Retry-After %q, %s", r.status, r.hdr.Get("Retry-After"), r.raw)
	}
	if r := echo(bob, "bob"); r.status != 200 {
		t.Fatalf("bob: %d %s", r.status, r.raw)
	}
}

// TestF5EngineLimitAnonymousLegacy: an anonymous legacy caller is held to
// the engine's per-caller limits by its client IP, as on the modern
// endpoint: past its burst one IP is refused 429 while another IP is
// served.
func TestF5EngineLimitAnonymousLegacy(t *testing.T) {
	leakCheck(t)
	eng := engine.New(engine.Config{Name: "legacy-test", Version: "1", RatePerPrincipal: 0.01, RateBurst: 2})
	if err := eng.AddTool(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error { c.Text("ok"); return nil }}); err != nil {
		t.Fatal(err)
	}
	rg := startRig(t, eng, legacy.Config{})
	legacy.CountLoopbackIPs(rg.leg) // 127.0.0.1 and 127.0.0.2 are two clients here
	other := rg.fromIP(t, "127.0.0.2")
	session := func(rg *rig) string {
		r := rg.do(t, "POST", legacyPath, "", initBody)
		if r.status != 200 {
			t.Fatalf("initialize: %d %s", r.status, r.raw)
		}
		return r.hdr.Get(legacy.HeaderSession)
	}
	mine, theirs := session(rg), session(other)
	for range 2 {
		if r := rg.do(t, "POST", legacyPath, mine, call(2, "echo", `{}`)); r.status != 200 {
			t.Fatalf("127.0.0.1 within its burst: %d %s", r.status, r.raw)
		}
	}
	r := rg.do(t, "POST", legacyPath, mine, call(2, "echo", `{}`))
	if r.status != 429 || !strings.Contains(r.raw, `"limit":"rate_per_principal"`) {
		t.Fatalf("127.0.0.1 past its burst: %d, %s", r.status, r.raw)
	}
	if r := other.do(t, "POST", legacyPath, theirs, call(2, "echo", `{}`)); r.status != 200 {
		t.Fatalf("127.0.0.2: %d %s", r.status, r.raw)
	}
}
