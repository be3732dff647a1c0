package mrtr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

// verified is what one Verify call returned.
type verified struct {
	id   string
	data []byte
	ok   bool
	err  error
}

// FuzzVerify sends tools/call requests whose params.requestState is any
// JSON text (a string, an escaped spelling of one, another type, a
// duplicate member) through a connection to a tool that calls Verify
// (MRTR-06, SEC-07, E5). Verify never panics; when the member is absent it
// reports no state; when it is present it agrees with encoding/json's
// reading of the request: a non-string is malformed (-32602), a string
// opens exactly as Open opens it for the request's binding, to the same
// data or the same reason.
func FuzzVerify(f *testing.F) {
	s, err := mrtr.NewSigner(mrtr.Config{Keys: [][]byte{bytes.Repeat([]byte{7}, 32)}, TTL: -1})
	if err != nil {
		f.Fatal(err)
	}
	binding := mrtr.Binding{Method: "tools/call", Target: "v", Arguments: []byte(`{}`)}
	good, err := s.Seal(binding, []byte("step-1"))
	if err != nil {
		f.Fatal(err)
	}
	srv := engine.New(engine.Config{Name: "mrtr-fuzz", Version: "1"})
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	got := make(chan verified, 16)
	if err := srv.AddTool(engine.Tool{Name: "v", Handler: func(c *engine.Call) error {
		data, ok, err := s.Verify(c)
		got <- verified{string(c.ID()), data, ok, err}
		c.Text("done")
		return nil
	}}); err != nil {
		f.Fatal(err)
	}
	replies := make(chan string, 16) // the ids of the responses
	mc := linestream.NewMem(engine.NewScope(srv, ""), func(frame []byte) error {
		var r struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(frame, &r) == nil {
			replies <- string(r.ID) // "": an error for a line with no readable id (GEN-05)
		}
		return nil
	}, linestream.Config{}, nil)
	seq := 0
	f.Cleanup(mc.Close)

	for _, v := range []string{`"` + good + `"`, `"\u00` + hexByte(good[0]) + good[1:] + `"`, `"` + good + `x"`, `5`, `null`, `{}`, `""`,
		`"a.b"`, `"\ud800"`, `"` + good + `","requestState":"x"`, `"x","requestState":"` + good + `"`, "-"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if strings.IndexByte(raw, '\n') >= 0 {
			return // two lines, two messages: framing, not Verify
		}
		member := ""
		if raw != "-" {
			member = `,"requestState":` + raw
		}
		seq++
		id := strconv.Itoa(seq)
		line := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"v","arguments":{}` + member +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		if err := mc.Send([]byte(line)); err != nil {
			t.Fatalf("send: %v", err)
		}
		// Every request is answered: with the tool's result, or with an
		// error before the tool runs (no id when the line is not JSON).
		var v verified
		ran := false
		for answered := false; !answered; {
			select {
			case rid := <-replies:
				answered = rid == id || rid == ""
			case v = <-got:
				if v.id != id {
					t.Fatalf("the tool ran for request %s while %s was sent", v.id, id)
				}
				ran = true
			case <-time.After(5 * time.Second):
				t.Fatalf("no reply to %s", line)
			}
		}
		if !ran {
			select {
			case v = <-got:
				ran = v.id == id
			default:
			}
		}
		if !ran {
			return
		}
		var p map[string]json.RawMessage // a null member is present
		var m struct {
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal([]byte(line), &m) != nil || json.Unmarshal(m.Params, &p) != nil {
			t.Fatalf("the tool ran for a line encoding/json refuses: %q", line)
		}
		state, present := p["requestState"]
		if !present {
			if v.ok || v.err != nil {
				t.Fatalf("no requestState in %q: Verify = %v, %v", raw, v.ok, v.err)
			}
			return
		}
		var str string
		if json.Unmarshal(state, &str) != nil || string(state) == "null" {
			if v.ok || !errors.Is(v.err, mrtr.ErrStateMalformed) {
				t.Fatalf("requestState %s is not a string: Verify = %v, %v", state, v.ok, v.err)
			}
			return
		}
		data, oerr := s.Open(binding, str)
		switch {
		case oerr == nil && (!v.ok || !bytes.Equal(v.data, data)):
			t.Fatalf("requestState %s opens to %q; Verify = %q, %v, %v", state, data, v.data, v.ok, v.err)
		case oerr != nil && v.ok:
			t.Fatalf("requestState %s does not open (%v); Verify accepted it", state, oerr)
		case oerr != nil && !errors.Is(v.err, mrtr.ErrStateMalformed) && v.err.Error() != oerr.Error():
			t.Fatalf("requestState %s: Open says %v, Verify %v", state, oerr, v.err)
		}
	})
}
