package load

import (
	"bytes"
	"strconv"
	"testing"
)

func TestAddDecimal(t *testing.T) {
	for i, tc := range []struct {
		d    string
		v    int64
		want string // "": the sum needs another digit
	}{
		0: {"0", 0, "0"},
		1: {"64", 64, ""},
		2: {"128", 64, "192"},
		3: {"936", 64, ""},
		4: {"9936", 64, ""},
		5: {"1936", 64, "2000"},
		6: {"999999999999999999", 1, ""},
		7: {"100000000000000063", 64, "100000000000000127"},
		8: {"5", 4, "9"},
		9: {"5", 5, ""},
	} {
		d := []byte(tc.d)
		ok := addDecimal(d, tc.v)
		if tc.want == "" {
			if ok {
				t.Errorf("%d: %s+%d = %s, want an overflow", i, tc.d, tc.v, d)
			}
			continue
		}
		if !ok || string(d) != tc.want {
			t.Errorf("%d: %s+%d = %s (%v), want %s", i, tc.d, tc.v, d, ok, tc.want)
		}
	}
}

// TestSlotLine: a slot's lines, built in place from the last one, are the
// lines the templates build for each id: across ids that gain a digit,
// templates that carry the id twice (progressToken) or once, changes of
// template and ids that do not follow the last one.
func TestSlotLine(t *testing.T) {
	tpls := []*reqTemplate{
		newTemplate("tools/call", callParams("echo", []byte(`{"text":"hi"}`)), true),
		newTemplate("tools/list", nil, false),
	}
	for _, win := range []int64{1, 3, 64, 100} {
		for k := range min(win, 3) {
			var l slotLine
			id := k + win
			for step := range 3000 {
				ti := 0
				if step%97 > 90 {
					ti = 1
				}
				if step == 1500 {
					id += 7 * win // a jump: the line is built again
				}
				want := append(tpls[ti].appendBody(nil, strconv.AppendInt(nil, id, 10)), '\n')
				if got := l.line(tpls, ti, id, win); !bytes.Equal(got, want) {
					t.Fatalf("win %d slot %d id %d template %d:\n got %s\nwant %s", win, k, id, ti, got, want)
				}
				id += win
			}
		}
	}
}

// TestSlotLinesUsed: the standard fixture's inline connection builds its
// requests in place (the fake echoes the ids of the lines it was written,
// TestGenLoopAnswersEveryRequest), unless a template takes a sequence
// number.
func TestSlotLinesUsed(t *testing.T) {
	g := newGenLoop(t, false)
	if g.c.lines == nil {
		t.Fatal("no slot lines on an inline connection")
	}
	g.step()
	if g.c.lines[5].id != 2*g.c.win+5 {
		t.Errorf("slot 5's line holds id %d, want %d", g.c.lines[5].id, 2*g.c.win+5)
	}
	g.c.r.tpls = append(g.c.r.tpls, newTemplate("tools/call", []byte(`"uri":"`+seqMark+`",`), false).withSeq())
	if g.c.inlineLines() {
		t.Error("slot lines with a sequence-number template")
	}
}
