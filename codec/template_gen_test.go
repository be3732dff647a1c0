package codec

import (
	"reflect"
	"strings"
	"testing"
)

// TestPeekTemplateGeneration: Envelope.Template is 0 unless a template
// took the message; a hit's envelope is a fresh peek's but for it; a
// message one byte off the template in a member the promise covers
// (method, name, protocol version, clientInfo, clientCapabilities) never
// carries the template's generation, and the template learned from it
// has a new one; two memos never share one; PeekWith and PeekLine
// through one memo give the same.
func TestPeekTemplateGeneration(t *testing.T) {
	msg := []byte(fixture)
	read := func(m *PeekMemo, msg []byte, line bool) Envelope {
		t.Helper()
		var e Envelope
		if line {
			if n := PeekLine(append(msg, '\n'), &e, PeekConfig{Memo: m}); n != len(msg) {
				t.Fatalf("%s: PeekLine %d", msg, n)
			}
		} else if err := PeekWith(msg, &e, PeekConfig{Memo: m}); err != nil {
			t.Fatalf("%s: %v", msg, err)
		}
		return e
	}
	fresh := read(nil, msg, false)
	if fresh.Template() != 0 {
		t.Fatalf("no memo: template %d", fresh.Template())
	}
	m := new(PeekMemo)
	if e := read(m, msg, false); e.Template() != 0 {
		t.Fatalf("first read (learned): template %d, want 0", e.Template())
	}
	hit := read(m, msg, false)
	g := hit.Template()
	if g == 0 {
		t.Fatal("second read: no template")
	}
	hit.tmpl = 0
	if !reflect.DeepEqual(hit, fresh) {
		t.Fatalf("hit\n%+v\nfresh\n%+v", hit, fresh)
	}
	if e := read(m, msg, true); e.Template() != g {
		t.Fatalf("PeekLine: template %d, want %d", e.Template(), g)
	}
	m2 := new(PeekMemo)
	read(m2, msg, false)
	if e := read(m2, msg, false); e.Template() == 0 || e.Template() == g {
		t.Fatalf("another memo: template %d (the first's %d)", e.Template(), g)
	}
	used := map[uint64]bool{g: true}
	for _, off := range []struct{ from, to string }{
		{`"tools/call"`, `"tools/calm"`}, {`"tools/call"`, `"tools/cal"`}, {`"echo"`, `"echp"`}, {`"echo"`, `"echoo"`},
		{`"2026-07-28"`, `"2026-07-29"`}, {`"2026-07-28"`, `"2026-07-2"`}, {`"wrk"`, `"wrl"`},
		{`:{},"progressToken"`, `:{"a":1},"progressToken"`}, {`"version":"1"`, `"version":"2"`},
	} {
		v := []byte(strings.Replace(fixture, off.from, off.to, 1))
		m := new(PeekMemo)
		read(m, msg, false)
		e := read(m, msg, false)
		g1 := e.Template()
		var gv uint64
		for j := range 6 {
			e := read(m, v, j%2 == 1)
			if e.Template() == g1 {
				t.Fatalf("%s: the template's generation %d for a message one byte off it", v, g1)
			}
			if e.Template() != 0 {
				gv = e.Template()
			}
		}
		if gv == 0 || used[gv] || used[g1] {
			t.Fatalf("%s: generations %d (fixture), %d (variant): want new, distinct, nonzero", v, g1, gv)
		}
		used[g1], used[gv] = true, true
		if e = read(m, msg, false); e.Template() == g1 || e.Template() == gv {
			t.Fatalf("the fixture after the variant: an old generation %d", e.Template())
		}
	}
}

// FuzzTemplatePromise reads eight requests through one memo, each made
// of one of two pairs of stretches (a: from just past the id to the
// arguments' end; bp: the rest), in the order the bits of order say,
// by PeekWith or PeekLine (the bits of how): every read must give what
// the object loop gives, and every read taken under one template
// generation the same members (Envelope.Template's promise). The seeds
// are the fixture's stretches and stretches one byte off them in the
// members the promise covers.
func FuzzTemplatePromise(f *testing.F) {
	const (
		a  = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}`
		bp = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}}}`
	)
	for i, off := range []struct{ from, to string }{
		{`"tools/call"`, `"tools/calm"`}, {`"echo"`, `"echp"`}, {`"echo"`, `"ech"`}, {`"2026-07-28"`, `"2026-07-29"`},
		{`"wrk"`, `"wrl"`}, {`:{},"progressToken"`, `:{"a":1},"progressToken"`}, {`"hi"`, `"ho"`}, {`"echo"`, `"e\u0063ho"`},
		{`"2026-07-28"`, `"2026-07-2\u0038"`}, {`,"progressToken":1`, ``}, {`"tools/call"`, `"tools\/call"`},
	} {
		a2, bp2 := strings.Replace(a, off.from, off.to, 1), strings.Replace(bp, off.from, off.to, 1)
		f.Add(a, bp, a2, bp2, uint8(0b11001100), uint8(i))
		f.Add(a, bp, a2, bp2, uint8(0b10101010), uint8(0xff-i))
	}
	f.Fuzz(func(t *testing.T, a1, bp1, a2, bp2 string, order, how uint8) {
		memo := new(PeekMemo)
		seen := map[uint64]string{}
		for j := range 8 {
			a, bp := a1, bp1
			if order>>j&1 != 0 {
				a, bp = a2, bp2
			}
			if !memoOK(memo) {
				t.Fatalf("read %d: the memo's offsets out of order: %+v %+v", j, memo.at, memo.tat)
			}
			msg := []byte(`{"jsonrpc":"2.0","id":` + string(rune('1'+j)) + a + bp)
			if how>>j&1 == 0 {
				if got, err := comparePeekShapeOnce(t, msg, PeekConfig{Memo: memo}); err == nil {
					checkTemplate(t, seen, msg, &got)
				}
				continue
			}
			// got's spans are in line, which append may have moved (a
			// message whose length fills its allocation): compare them
			// as places in line, not in msg.
			var got Envelope
			line := append(msg, '\n')
			n := PeekLine(line, &got, PeekConfig{Memo: memo})
			if n < 0 {
				continue
			}
			if n != len(msg) {
				t.Fatalf("%q: PeekLine took %d bytes of %d", msg, n, len(msg))
			}
			var want Envelope
			if err := PeekWith(msg, &want, PeekConfig{Memo: genericPeek}); err != nil {
				t.Fatalf("%q: PeekLine took the line, PeekWith: %v", msg, err)
			}
			if x, y := spansOf(line[:len(msg)], &got), spansOf(msg, &want); x != y {
				t.Fatalf("%q (read %d):\n got %+v\nwant %+v", msg, j, x, y)
			}
			checkTemplate(t, seen, line[:len(msg)], &got)
		}
	})
}

// memoOK reports whether m's offsets keep the order replay's spans rely
// on (they are built without bounds checks): the template's method end,
// params '{', name start and end inside its first stretch, the _meta
// start's members inside the bytes kept.
func memoOK(m *PeekMemo) bool {
	if m.n != 0 {
		a := m.at
		if a[0] > a[1] || a[1] > a[2] || a[2] > a[3] || a[3] > a[4] || int(a[4]) > m.n || metaAt+m.n+shapeProgress.n > len(m.b) {
			return false
		}
	}
	if m.an != 0 {
		t := m.tat
		if int(t[0]) < shapeMethod.n || t[0] >= t[3] || t[3] >= t[1] || t[1] > t[2] || t[2] >= m.an || int(m.an) > len(m.t) || m.n == 0 {
			return false
		}
	}
	return true
}

// TestMemoOrderedGuard: learn keeps a template only when its offsets are
// in the order replay's unchecked spans need (ordered); each offset moved
// out of that order is refused, and a template learned from the fixture
// passes the guard and the tests' own memoOK.
func TestMemoOrderedGuard(t *testing.T) {
	m := new(PeekMemo)
	var e Envelope
	for range 2 {
		if err := PeekWith([]byte(fixture), &e, PeekConfig{Memo: m}); err != nil {
			t.Fatal(err)
		}
	}
	if e.Template() == 0 || m.an == 0 {
		t.Fatal("the fixture did not hit a template")
	}
	an := int(m.an)
	if !m.ordered(an) || !memoOK(m) {
		t.Fatalf("a learned template out of order: %+v %+v", m.at, m.tat)
	}
	for _, bad := range []func(c *PeekMemo) int{
		func(c *PeekMemo) int { c.at[0] = c.at[1] + 1; return an },
		func(c *PeekMemo) int { c.at[2] = c.at[1] - 1; return an },
		func(c *PeekMemo) int { c.at[4] = c.at[3] - 1; return an },
		func(c *PeekMemo) int { c.at[4] = uint16(c.n + 1); return an },
		func(c *PeekMemo) int { c.n = len(c.b); return an },
		func(c *PeekMemo) int { c.n = 0; return an },
		func(c *PeekMemo) int { c.tat[0] = uint8(shapeMethod.n - 1); return an },
		func(c *PeekMemo) int { c.tat[3] = c.tat[0]; return an },
		func(c *PeekMemo) int { c.tat[1] = c.tat[3]; return an },
		func(c *PeekMemo) int { c.tat[2] = c.tat[1] - 1; return an },
		func(c *PeekMemo) int { return int(c.tat[2]) },
		func(c *PeekMemo) int { return len(c.t) + 1 },
	} {
		c := *m
		if n := bad(&c); c.ordered(n) {
			t.Errorf("offsets out of order accepted: %+v %+v an %d", c.at, c.tat, n)
		}
	}
}
