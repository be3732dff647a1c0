package httpwire

import (
	"reflect"
	"strings"
	"testing"
)

// parseSSE feeds segs to a parser and returns the events' data; with
// types, each is prefixed by its event type and "|".
func parseSSE(segs []string, types bool) []string {
	p := SSEParser{Types: types}
	var got []string
	for _, s := range segs {
		p.Push([]byte(s))
		for {
			d, ok := p.Next()
			if !ok {
				break
			}
			if types {
				got = append(got, string(p.Event())+"|"+string(d))
			} else {
				got = append(got, string(d))
			}
		}
	}
	return got
}

// TestSSEParserEverySplit feeds event streams to the SSE parser in two and
// in three segments at every position.
func TestSSEParserEverySplit(t *testing.T) {
	cases := []struct {
		in    string
		want  []string
		types []string // with Types set
	}{
		{"data: a\n\ndata: b\n\n", []string{"a", "b"}, []string{"message|a", "message|b"}},
		{"data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}, nil},
		{"data: a\r\rdata: b\r\r", []string{"a", "b"}, nil},
		{"data: a\r\n\rdata: b\n\r\n", []string{"a", "b"}, nil},
		{"\xef\xbb\xbfdata: bom\n\n", []string{"bom"}, nil},
		{": c\nevent: message\ndata:x\ndata:  y\n\n", []string{"x\n y"}, []string{"message|x\n y"}},
		{"event: other\ndata: no\n\nevent:\ndata: yes\n\n", []string{"yes"}, []string{"other|no", "message|yes"}},
		{"event: endpoint\r\ndata: /messages?session=1\r\n\r\ndata: m\r\n\r\n", []string{"m"}, []string{"endpoint|/messages?session=1", "message|m"}},
		{"event: x\n\ndata: after an empty event\n\n", []string{"after an empty event"}, []string{"message|after an empty event"}},
		{"data\n\ndata:\n\n", []string{"", ""}, nil},
		{"id: 1\nretry: 5\nfoo: bar\n\n", nil, nil},
		{"data: unterminated", nil, nil},
	}
	for _, tc := range cases {
		for i := 0; i <= len(tc.in); i++ {
			for j := i; j <= len(tc.in); j++ {
				segs := []string{tc.in[:i], tc.in[i:j], tc.in[j:]}
				if got := parseSSE(segs, false); !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("%q split at %d,%d: got %q, want %q", tc.in, i, j, got, tc.want)
				}
				if tc.types == nil {
					continue
				}
				if got := parseSSE(segs, true); !reflect.DeepEqual(got, tc.types) {
					t.Fatalf("Types: %q split at %d,%d: got %q, want %q", tc.in, i, j, got, tc.types)
				}
			}
		}
	}
}

// TestSSEPending: what the parser holds for an unfinished event grows by
// at most one segment between two checks, and drops once it is returned.
func TestSSEPending(t *testing.T) {
	var p SSEParser
	seg := []byte(strings.Repeat("y", 100))
	p.Push([]byte("data: "))
	if _, ok := p.Next(); ok || p.Pending() != len("data: ") {
		t.Fatalf("pending %d after a partial line", p.Pending())
	}
	for i := 1; i <= 10; i++ {
		p.Push(seg)
		if _, ok := p.Next(); ok {
			t.Fatal("event before its end")
		}
		if got, want := p.Pending(), len("data: ")+i*len(seg); got != want {
			t.Fatalf("pending %d, want %d", got, want)
		}
	}
	p.Push([]byte("\ndata: z\n"))
	if _, ok := p.Next(); ok {
		t.Fatal("event before its blank line")
	}
	if got, want := p.Pending(), 10*len(seg)+1+2; got != want {
		t.Fatalf("pending %d after two data lines, want %d", got, want)
	}
	p.Push([]byte("\n"))
	d, ok := p.Next()
	if !ok || len(d) != 10*len(seg)+2 || p.Pending() != 0 {
		t.Fatalf("event %d bytes, ok %v, pending %d", len(d), ok, p.Pending())
	}
}
