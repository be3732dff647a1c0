//go:build linux

package codec

import (
	"strings"
	"syscall"
	"testing"
)

// TestPeekReadsInsideBuffer: Peek and ScanArguments read only inside the
// message, though their word (and 2-byte) loads carry no bounds check. Every prefix
// of a few messages is placed against an inaccessible page, right after
// one and right before one: a load outside the message faults. (It caught
// the object loop's guess for a 9-to-16-byte key reading a word past the
// end of `{"jsonrpc":"2.0","id":1}` when the guessed key was shorter.)
func TestPeekReadsInsideBuffer(t *testing.T) {
	page := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 3*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer syscall.Munmap(mem)
	if err := syscall.Mprotect(mem[:page], syscall.PROT_NONE); err != nil {
		t.Skip("mprotect:", err)
	}
	if err := syscall.Mprotect(mem[2*page:], syscall.PROT_NONE); err != nil {
		t.Skip("mprotect:", err)
	}
	mid := mem[page : 2*page]
	msgs := []string{fixture, vecToolsCall, vecResourcesRead, vecCancelled,
		`{"jsonrpc":"2.0","id":1}`, `{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"n","arguments":{"a":"b"}}}`,
		`{"jsonrpc":"2.0","method":"m","params":{"_meta":{"progressToken":"t","io.modelcontextprotocol/logLevel":"x"}}}`,
		`{"params":{"requestId":1,"uri":"u"},"error":{},"result":{}}`, `{"a":"` + strings.Repeat("x", 20) + `"}`,
		// The guess's last-word compare (a long guess, a short name near
		// the end), knownKey's (short names near the start), and the
		// 2-byte loads of `,"` in the object loop, skipFlat and skipArgs.
		`{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v","x":1}}}`, `{"id":"x","uri":1,"i":2}`,
		`{"params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1","x":null},"progressToken":7}}}`,
		`{"params":{"arguments":{"a":"b","c":1,"d":true,"e":false,"f":null}},"id":1}`,
		// Arguments ending the message (recordTail).
		`{"params":{"arguments":{"a":1,"text":"hello w"}}}`, `{"params":{"arguments":{"b":"x","a":true}}}`}
	msgs = append(msgs, shapeSeeds()...) // the usual-shape readers' patterns (shape.go)
	var env Envelope
	vals := make([][]byte, 2)
	for _, m := range msgs {
		for n := 0; n <= len(m); n++ {
			for _, at := range []int{0, len(mid) - n} {
				b := mid[at : at+n : at+n]
				copy(b, m[:n])
				PeekWith(b, &env, PeekConfig{})
				env.ScanArguments([]string{"a", "text"}, vals)
				// With a memo of the whole message, and of the prefix.
				o := PeekConfig{Memo: new(PeekMemo)}
				PeekWith([]byte(m), &env, o)
				PeekWith(b, &env, o)
				PeekWith(b, &env, o)
			}
		}
	}
}
