package engine

import (
	"encoding/json"
	"math"
	"testing"
)

// nanOut is flat with a text of its own, so it takes the direct way
// (Call.structuredFlat), whose encoder declines NaN.
type nanOut struct {
	X float64 `json:"x"`
}

func (nanOut) AppendResultText(dst []byte) []byte { return append(dst, "t"...) }

// TestTypedDirectDeclineLeavesNoHalfResult: when the direct encoding of a
// typed result declines (NaN, which the general way cannot encode either),
// no half-written result is left set: middleware after next sees no
// result type, as on the general way, and one that swallows the error
// (against Middleware's doc) sends the handler's "no result" error, never
// the half (it sent invalid JSON).
func TestTypedDirectDeclineLeavesNoHalfResult(t *testing.T) {
	for _, swallow := range []bool{false, true} {
		var seen string
		mw := func(next HandlerFunc) HandlerFunc {
			return func(c *Call) error {
				err := next(c)
				seen = c.ResultType()
				if err != nil && c.Method() == "tools/call" && swallow {
					return nil
				}
				return err
			}
		}
		for _, name := range []string{"direct", "general"} {
			s := New(Config{Middleware: []Middleware{mw}})
			h := func(c *Call, in struct{}) (nanOut, error) { return nanOut{X: math.NaN()}, nil }
			if err := AddTool(s, Tool{Name: name, Inline: true, ValidateOutput: name == "general"}, h); err != nil {
				t.Fatal(err)
			}
			out := runToolCall(t, s, name, "")
			if seen != "" {
				t.Errorf("%s (swallow %v): ResultType after next = %q, want none", name, swallow, seen)
			}
			var m struct {
				Error *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(out, &m); err != nil || m.Error == nil || m.Error.Code != -32603 {
				t.Errorf("%s (swallow %v): reply %s, want a -32603 error (%v)", name, swallow, out, err)
			}
		}
	}
}
