package load

import (
	"bytes"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
)

// maxShapes is how many reply shapes a stream connection remembers (one per
// distinct reply of a mix is enough; beyond that the oldest is replaced).
const maxShapes = 4

// replyShape is a response that was checked in full (codec.Peek, then
// classify) with its id token cut out: head is every byte before the id,
// tail every byte after it. A later line made of head, a positive integer
// without leading zeros, and tail is the same JSON text with another
// integer in the id's place, so Peek and classify would say of it exactly
// what they said of this one: it is answered from here, with two byte
// comparisons instead of a parse. Anything else takes the full path.
type replyShape struct {
	head, tail []byte
	out        [2]int // classify's outcome: [0] for a plain request, [1] for tools/call
	code       [2]int64
}

// replyShapes is a stream reader's small cache of reply shapes. It belongs
// to the reader goroutine (or the poller) of one connection; its buffers
// are reused, so learning allocates only until they have grown.
type replyShapes struct {
	s    [maxShapes]replyShape
	n    int // shapes in use
	next int // the one replaced when all are in use
}

// match finds the shape frame is an instance of and returns it with the id.
func (rs *replyShapes) match(frame []byte) (*replyShape, int64) {
	for i := range rs.n {
		sh := &rs.s[i]
		if len(frame) <= len(sh.head)+len(sh.tail) || !bytes.HasPrefix(frame, sh.head) || !bytes.HasSuffix(frame, sh.tail) {
			continue
		}
		if id, ok := plainID(frame[len(sh.head) : len(frame)-len(sh.tail)]); ok {
			return sh, id
		}
	}
	return nil, 0
}

// matchLine finds the shape that the line at the start of rest (input not
// yet split into lines) is an instance of, followed by its '\n': the shape,
// the id and the line's length without the '\n'. It is match for a line
// whose end is not known yet; finding the tail right after the id finds
// the end, so the line is not scanned for its '\n' first. A line it does
// not take (a shape that ends in "\r\n", a line cut by the end of rest)
// is left to match after the line has been split off.
func (rs *replyShapes) matchLine(rest []byte) (*replyShape, int64, int) {
	for i := range rs.n {
		sh := &rs.s[i]
		h := len(sh.head)
		if len(rest) <= h+len(sh.tail) || string(rest[:h]) != string(sh.head) || rest[h] == '0' {
			continue
		}
		var id int64
		j := h
		for ; j < len(rest) && j-h < 18; j++ {
			c := rest[j]
			if c < '0' || c > '9' {
				break
			}
			id = id*10 + int64(c-'0')
		}
		end := j + len(sh.tail)
		if j == h || end >= len(rest) || rest[end] != '\n' || string(rest[j:end]) != string(sh.tail) {
			continue
		}
		return sh, id, end
	}
	return nil, 0, 0
}

// plainID parses a positive JSON integer token without leading zeros and
// of at most 18 digits: the only id tokens the generator sends.
func plainID(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 || b[0] == '0' {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// learn remembers frame, which Peek accepted into env as a response with a
// plain integer id, as a shape.
func (rs *replyShapes) learn(frame []byte, env *codec.Envelope) {
	if _, ok := plainID(env.ID); !ok {
		return
	}
	off := int(uintptr(unsafe.Pointer(unsafe.SliceData(env.ID))) - uintptr(unsafe.Pointer(unsafe.SliceData(frame))))
	if off < 0 || off+len(env.ID) > len(frame) {
		return // not a span of frame (cannot happen with Peek)
	}
	var sh *replyShape
	if rs.n < maxShapes {
		sh = &rs.s[rs.n]
		rs.n++
	} else {
		sh = &rs.s[rs.next]
		rs.next = (rs.next + 1) % maxShapes
	}
	sh.head = append(sh.head[:0], frame[:off]...)
	sh.tail = append(sh.tail[:0], frame[off+len(env.ID):]...)
	sh.out[0], sh.code[0] = classify(frame, env, false)
	sh.out[1], sh.code[1] = classify(frame, env, true)
}

// outcome is the shape's classification for a request that is (or is
// not) a tools/call.
func (sh *replyShape) outcome(isCall bool) (int, int64) {
	if isCall {
		return sh.out[1], sh.code[1]
	}
	return sh.out[0], sh.code[0]
}
