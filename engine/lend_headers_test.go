package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// oneHeader is a request's headers: X-Tenant with its value.
type oneHeader string

func (h oneHeader) LookupHeader(name string) ([]byte, bool) {
	if name == "X-Tenant" {
		return []byte(h), true
	}
	return nil, false
}

func (h oneHeader) VisitHeaders(f func(name, value []byte) bool) {
	f([]byte("X-Tenant"), []byte(h))
}

// lendingCapture is capture whose request's headers are lent on demand
// (HeadersLender); asked counts the loans.
type lendingCapture struct {
	capture
	h     Headers
	asked int
}

func (r *lendingCapture) RequestHeaders(*Request) Headers { r.asked++; return r.h }

// TestHeadersLender: a request without SetHeaders reads its headers from
// its Replier when that lends them (HeaderBytes, Header, VisitHeaders),
// without being marked rare; SetHeaders takes precedence over the loan; a
// Replier that lends nil, or does not lend, leaves the request without
// headers.
func TestHeadersLender(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddTool(Tool{Name: "hdr", Inline: true, Handler: func(c *Call) error {
		v, ok := c.HeaderBytes("X-Tenant")
		var seen string
		c.VisitHeaders(func(k, v []byte) bool { seen += string(k) + "=" + string(v); return true })
		c.Text(fmt.Sprintf("%s %v %s %s rare=%v", v, ok, c.Header("X-Tenant"), seen, c.rare))
		return nil
	}})
	msg := batchMsg("1", "hdr")
	cases := []struct {
		name      string
		lend      bool
		lent, set Headers
		want      string
		asked     int
	}{
		{name: "lent", lend: true, lent: oneHeader("acme"), want: "acme true acme X-Tenant=acme rare=false", asked: 3},
		{name: "set first", lend: true, lent: oneHeader("acme"), set: oneHeader("set"), want: "set true set X-Tenant=set rare=true"},
		{name: "lent nil", lend: true, want: " false   rare=false", asked: 3},
		{name: "not a lender", set: nil, want: " false   rare=false"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var env codec.Envelope
			if err := codec.Peek(msg, &env); err != nil {
				t.Fatal(err)
			}
			lc := &lendingCapture{capture: capture{done: make(chan struct{})}, h: tc.lent}
			var rep Replier = &lc.capture
			if tc.lend {
				rep = lc
			}
			r := NewScope(s, "").Begin(context.Background(), msg, &env, rep, nil)
			if tc.set != nil {
				r.SetHeaders(tc.set)
			}
			if e := r.Check(); e != nil {
				t.Fatalf("check: %s", e.Message)
			}
			r.Run()
			<-lc.done
			got := decodeReply(t, lc.reply)
			if got.Result == nil || len(got.Result.Content) != 1 || got.Result.Content[0].Text != tc.want {
				t.Errorf("reply %s, want text %q", lc.reply, tc.want)
			}
			if lc.asked != tc.asked {
				t.Errorf("asked %d times, want %d", lc.asked, tc.asked)
			}
		})
	}
}
