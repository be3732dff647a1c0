package engine

import (
	"testing"
	"unsafe"
)

// TestCallHotLines: the Call fields that a request on its own reads or
// writes on every request from admit to release (the lock group, the
// flags of sub, logs, dl and prog, the tracker's links, the end's fields)
// lie on six 64-byte lines of the Call (a Call is 64-byte aligned: its
// size class, 1792 bytes, is a multiple of 64). Eight before the flags
// were put first in their structs and prog last (eng22).
func TestCallHotLines(t *testing.T) {
	var c Call
	base := uintptr(unsafe.Pointer(&c))
	lines := map[uintptr][]string{}
	for _, f := range []struct {
		name string
		p    unsafe.Pointer
	}{
		{"limKey", unsafe.Pointer(&c.limKey)}, {"mu", unsafe.Pointer(&c.mu)},
		{"done", unsafe.Pointer(&c.done)}, {"err", unsafe.Pointer(&c.err)},
		{"state", unsafe.Pointer(&c.state)}, {"sub", unsafe.Pointer(&c.sub)},
		{"logs.started", unsafe.Pointer(&c.logs.started)}, {"logs.dropped", unsafe.Pointer(&c.logs.dropped)},
		{"dl.armed", unsafe.Pointer(&c.dl.armed)}, {"dl.timedOut", unsafe.Pointer(&c.dl.timedOut)},
		{"prog.sent", unsafe.Pointer(&c.prog.sent)}, {"prog.pending", unsafe.Pointer(&c.prog.pending)},
		{"prog.armed", unsafe.Pointer(&c.prog.armed)},
		{"scope", unsafe.Pointer(&c.scope)}, {"tprev", unsafe.Pointer(&c.tprev)},
		{"tnext", unsafe.Pointer(&c.tnext)}, {"shard", unsafe.Pointer(&c.shard)},
		{"tracked", unsafe.Pointer(&c.tracked)}, {"ended", unsafe.Pointer(&c.ended)},
		{"rare", unsafe.Pointer(&c.rare)}, {"stopParent", unsafe.Pointer(&c.stopParent)},
		{"gen", unsafe.Pointer(&c.gen)}, {"t0", unsafe.Pointer(&c.t0)},
		{"batch", unsafe.Pointer(&c.batch)}, {"recycleTo", unsafe.Pointer(&c.recycleTo)},
		{"afters", unsafe.Pointer(&c.afters)}, {"afterUsed", unsafe.Pointer(&c.afterUsed)},
		{"self", unsafe.Pointer(&c.self)}, {"strs.lo", unsafe.Pointer(&c.strs.lo)},
		{"strs.hi", unsafe.Pointer(&c.strs.hi)},
	} {
		l := (uintptr(f.p) - base) / 64
		lines[l] = append(lines[l], f.name)
	}
	if len(lines) > 6 {
		t.Errorf("the fields every request touches lie on %d lines of the Call, want at most 6: %v", len(lines), lines)
	}
	if unsafe.Sizeof(c) > 1792 {
		t.Errorf("Call is %d bytes, past its size class of 1792", unsafe.Sizeof(c))
	}
}
