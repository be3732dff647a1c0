package load

import (
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

const (
	shapeEcho      = `{"jsonrpc":"2.0","id":65,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}],"isError":false}}`
	shapeToolError = `{"jsonrpc":"2.0","id":65,"result":{"resultType":"complete","content":[],"isError":true}}`
	shapeRPCError  = `{"jsonrpc":"2.0", "id" : 65 ,"error":{"code":-32602,"message":"Unknown tool"}}`
)

// learnShape learns msg as the only shape of a fresh cache.
func learnShape(t testing.TB, msg string) *replyShapes {
	t.Helper()
	var env codec.Envelope
	b := []byte(msg) // env's spans point into b: learn must see the same bytes
	if err := codec.Peek(b, &env); err != nil {
		t.Fatal(err)
	}
	rs := &replyShapes{}
	rs.learn(b, &env)
	if rs.n != 1 {
		t.Fatalf("%q not learnt", msg)
	}
	return rs
}

// TestReplyShapeMatch: a line matches a learnt shape only when it is the
// same text but for a plain positive integer in the id's place, and the
// match carries the id and the learnt verdict (per tools/call or not).
func TestReplyShapeMatch(t *testing.T) {
	for i, tc := range []struct {
		learnt, line string
		wantID       int64 // 0: no match
		out          [2]int
		code         int64
	}{
		0:  {shapeEcho, strings.Replace(shapeEcho, "65", "129", 1), 129, [2]int{outOK, outOK}, 0},
		1:  {shapeEcho, shapeEcho, 65, [2]int{outOK, outOK}, 0},
		2:  {shapeEcho, strings.Replace(shapeEcho, "65", "1234567890123", 1), 1234567890123, [2]int{outOK, outOK}, 0},
		3:  {shapeEcho, strings.Replace(shapeEcho, "65", "065", 1), 0, [2]int{}, 0},                 // leading zero: not JSON
		4:  {shapeEcho, strings.Replace(shapeEcho, "65", "-65", 1), 0, [2]int{}, 0},                 // never sent
		5:  {shapeEcho, strings.Replace(shapeEcho, "65", "6.5", 1), 0, [2]int{}, 0},                 // not an integer
		6:  {shapeEcho, strings.Replace(shapeEcho, "65", `"65"`, 1), 0, [2]int{}, 0},                // a string id
		7:  {shapeEcho, strings.Replace(shapeEcho, "65", "", 1), 0, [2]int{}, 0},                    // no id token
		8:  {shapeEcho, strings.Replace(shapeEcho, `"hi"`, `"ho"`, 1), 0, [2]int{}, 0},              // other text
		9:  {shapeEcho, strings.Replace(shapeEcho, "65", "1234567890123456789", 1), 0, [2]int{}, 0}, // 19 digits
		10: {shapeToolError, strings.Replace(shapeToolError, "65", "7", 1), 7, [2]int{outOK, outToolError}, 0},
		11: {shapeRPCError, strings.Replace(shapeRPCError, "65", "300", 1), 300, [2]int{outRPC, outRPC}, -32602},
	} {
		rs := learnShape(t, tc.learnt)
		sh, id := rs.match([]byte(tc.line))
		// matchLine on the line still joined to the next one says the same.
		lsh, lid, n := rs.matchLine([]byte(tc.line + "\n{\"jsonrpc\""))
		if lsh != sh || lid != id || sh != nil && n != len(tc.line) {
			t.Errorf("%d: matchLine %v %d %d, match %v %d (line length %d)", i, lsh != nil, lid, n, sh != nil, id, len(tc.line))
		}
		if tc.wantID == 0 {
			if sh != nil {
				t.Errorf("%d: %q matched (id %d), want no match", i, tc.line, id)
			}
			continue
		}
		if sh == nil || id != tc.wantID {
			t.Errorf("%d: match %v id %d, want id %d", i, sh != nil, id, tc.wantID)
			continue
		}
		for k, isCall := range []bool{false, true} {
			if out, code := sh.outcome(isCall); out != tc.out[k] || code != tc.code {
				t.Errorf("%d: isCall %v: outcome %d %d, want %d %d", i, isCall, out, code, tc.out[k], tc.code)
			}
		}
	}
}

// TestReplyShapeMatchLine: matchLine takes a line only with its '\n' in
// rest right after the shape's tail; the rest is left to match.
func TestReplyShapeMatchLine(t *testing.T) {
	rs := learnShape(t, shapeEcho)
	line := strings.Replace(shapeEcho, "65", "129", 1)
	for i, tc := range []struct {
		rest  string
		wantN int // 0: not taken
	}{
		0: {line + "\n", len(line)},
		1: {line + "\n" + line + "\n", len(line)},
		2: {line + "\r\n", 0},         // Next strips the '\r'; match takes it then
		3: {line, 0},                  // the '\n' is in the next read
		4: {line[:len(line)-1], 0},    // cut inside the tail
		5: {line[:30], 0},             // cut inside the id
		6: {line + " \n", 0},          // trailing blank: not the shape's text
		7: {"\n" + line + "\n", 0},    // a blank line first
		8: {line + "x\n", 0},          // more than the shape
		9: {shapeEcho[:22] + "\n", 0}, // the head alone
	} {
		sh, id, n := rs.matchLine([]byte(tc.rest))
		if tc.wantN == 0 {
			if sh != nil {
				t.Errorf("%d: %q taken (id %d, n %d)", i, tc.rest, id, n)
			}
			continue
		}
		if sh == nil || id != 129 || n != tc.wantN {
			t.Errorf("%d: %v id %d n %d, want id 129 n %d", i, sh != nil, id, n, tc.wantN)
		}
	}
}

// TestReplyShapesReplaceOldest: beyond maxShapes the oldest shape goes.
func TestReplyShapesReplaceOldest(t *testing.T) {
	rs := &replyShapes{}
	var env codec.Envelope
	for i := range maxShapes + 1 {
		msg := []byte(strings.Replace(shapeEcho, `"hi"`, `"t`+strings.Repeat("x", i)+`"`, 1))
		if err := codec.Peek(msg, &env); err != nil {
			t.Fatal(err)
		}
		rs.learn(msg, &env)
	}
	if rs.n != maxShapes {
		t.Fatalf("%d shapes", rs.n)
	}
	if sh, _ := rs.match([]byte(strings.Replace(shapeEcho, `"hi"`, `"t"`, 1))); sh != nil {
		t.Error("the oldest shape is still matched")
	}
	if sh, _ := rs.match([]byte(strings.Replace(shapeEcho, `"hi"`, `"t`+strings.Repeat("x", maxShapes)+`"`, 1))); sh == nil {
		t.Error("the newest shape is not matched")
	}
}

// FuzzReplyShape: whatever line a shape learnt from a valid response
// matches, codec.Peek accepts it as a response with the same integer id,
// and classify gives it the verdict the shape holds: answering from the
// shape never checks less than parsing would.
func FuzzReplyShape(f *testing.F) {
	for _, s := range []string{shapeEcho, shapeToolError, shapeRPCError} {
		f.Add([]byte(s), []byte(strings.Replace(s, "65", "4097", 1)))
		f.Add([]byte(s), []byte(strings.Replace(s, "65", "65 ", 1)))
		f.Add([]byte(s), []byte(strings.Replace(s, "65", "4097", 1)+"\n"+s))
	}
	f.Add([]byte(`{"id":1,"jsonrpc":"2.0","result":{}}`), []byte(`{"id":12,"jsonrpc":"2.0","result":{}}`))
	f.Fuzz(func(t *testing.T, learnt, line []byte) {
		var env codec.Envelope
		if codec.Peek(learnt, &env) != nil || env.Kind != codec.KindResponse {
			return
		}
		var rs replyShapes
		rs.learn(learnt, &env)
		// matchLine takes a line only as match takes it once split off.
		if lsh, lid, n := rs.matchLine(line); lsh != nil {
			if n >= len(line) || line[n] != '\n' {
				t.Fatalf("matchLine took %d bytes of %q, not up to a newline", n, line)
			}
			if sh, id := rs.match(line[:n]); sh != lsh || id != lid {
				t.Fatalf("matchLine took %q as id %d, match says %v %d", line[:n], lid, sh != nil, id)
			}
		}
		sh, id := rs.match(line)
		if sh == nil {
			return
		}
		var env2 codec.Envelope
		if err := codec.Peek(line, &env2); err != nil {
			t.Fatalf("matched %q, which Peek rejects: %v", line, err)
		}
		if env2.Kind != codec.KindResponse || env2.IDKind != codec.IDNumber {
			t.Fatalf("matched %q: kind %v, id kind %v", line, env2.Kind, env2.IDKind)
		}
		if got, ok := parseInt(env2.ID); !ok || got != id {
			t.Fatalf("matched %q with id %d, Peek reads %q", line, id, env2.ID)
		}
		for _, isCall := range []bool{false, true} {
			out, code := classify(line, &env2, isCall)
			if o, c := sh.outcome(isCall); o != out || c != code {
				t.Fatalf("matched %q (tools/call %v): shape says %d %d, classify %d %d", line, isCall, o, c, out, code)
			}
		}
	})
}
