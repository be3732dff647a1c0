package load

import "strconv"

// slotLine is the request line a slot of an inline connection sent last,
// kept so that the slot's next one is built in place. A slot's requests
// have the ids k, k+win, k+2·win…, so when the slot sends the same
// template again only the id changes, by adding the window to its digits
// (usually two or three of them) where it stands in the line, instead of
// formatting it and copying the template's pieces around it. A line is
// rebuilt when the template changes or the id gains a digit.
type slotLine struct {
	b   []byte  // the line, its '\n' included
	id  int64   // the id in b (0: nothing built yet)
	tpl int     // the template b was built from
	n   int     // the id's digits
	at  []int32 // where each copy of the id starts in b (the id, then a progressToken)
}

// inlineLines reports whether the requests of connection c can be built
// in place: an inline window (so at most inlineMaxBytes of lines are kept)
// whose templates carry the id only (no sequence number).
func (c *streamConn) inlineLines() bool {
	if !c.inline {
		return false
	}
	for _, t := range c.r.tpls {
		if t.seqGap > 0 {
			return false
		}
	}
	return true
}

// line returns the request line of template ti with id for a slot whose
// last line is l, win being the connection's window. The slice is l's own
// and valid until its next call.
func (l *slotLine) line(tpls []*reqTemplate, ti int, id, win int64) []byte {
	if l.id != 0 && ti == l.tpl && id-l.id == win {
		at := int(l.at[0])
		if addDecimal(l.b[at:at+l.n], win) {
			for _, a := range l.at[1:] {
				copy(l.b[a:int(a)+l.n], l.b[at:at+l.n])
			}
			l.id = id
			return l.b
		}
	}
	t := tpls[ti]
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], id, 10)
	l.b = append(t.appendBody(l.b[:0], d), '\n')
	l.id, l.tpl, l.n = id, ti, len(d)
	l.at = l.at[:0]
	pos := len(t.parts[0])
	for _, p := range t.parts[1:] {
		l.at = append(l.at, int32(pos))
		pos += len(d) + len(p)
	}
	return l.b
}

// addDecimal adds v (≥ 0) to the decimal number d in place. It reports
// false when the sum has more digits than d (d is then garbage).
func addDecimal(d []byte, v int64) bool {
	for i := len(d) - 1; i >= 0; i-- {
		x := int64(d[i]-'0') + v
		d[i] = byte('0' + x%10)
		v = x / 10
		if v == 0 {
			return true
		}
	}
	return v == 0
}
