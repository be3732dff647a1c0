//go:build !race

package streamhttp

import (
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/mcpwire/mcpwire/engine"
)

// handlerAllocs is the allocations of one echo tools/call through the
// fasthttp handler, on a reused RequestCtx, for engine options opt.
func handlerAllocs(t *testing.T, opt engine.Config) float64 {
	s := New(benchEngineWith(t, opt), Config{})
	if err := s.bindAddr(benchAddr); err != nil {
		t.Fatal(err)
	}
	req := echoRequest()
	req.Header.Set("X-Tenant", "acme")
	defer fasthttp.ReleaseRequest(req)
	call, _ := handlerCall(t, s, req)
	return testing.AllocsPerRun(200, call)
}

// TestHandlerAllocsWithExtensions: hooks, a middleware reading a header and
// a tool filter that allocate nothing themselves add no allocation to a
// request on the HTTP front end (issue 13).
func TestHandlerAllocsWithExtensions(t *testing.T) {
	var seen int
	ext := defaultOptions()
	ext.Hooks = engine.Hooks{
		CallStart: func(c *engine.Call) { seen += len(c.Method()) },
		CallEnd:   func(c *engine.Call, o engine.Outcome) { seen += int(o.Reason) },
	}
	ext.Middleware = []engine.Middleware{func(next engine.HandlerFunc) engine.HandlerFunc {
		return func(c *engine.Call) error {
			if v, ok := c.HeaderBytes("x-tenant"); ok {
				seen += len(v)
			}
			return next(c)
		}
	}}
	ext.ToolFilter = func(c *engine.Call, t *engine.Tool) bool { return true }
	base := handlerAllocs(t, defaultOptions())
	with := handlerAllocs(t, ext)
	t.Logf("allocs per request: %.2f without extensions, %.2f with", base, with)
	if with > base {
		t.Errorf("extensions add allocations: %.2f > %.2f", with, base)
	}
	if seen == 0 {
		t.Error("the hooks did not run")
	}
}
