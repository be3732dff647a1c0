package codec

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestEnvelopeRebaseCoversEveryField fills every span field of an Envelope
// (every []byte and every Str.Raw, found by reflection) with a span of a
// message, rebases onto a copy, and checks that each now points into the
// copy. A span field added to Envelope without a line in Rebase fails here.
func TestEnvelopeRebaseCoversEveryField(t *testing.T) {
	old := make([]byte, 4096)
	for i := range old {
		old[i] = byte('a' + i%26)
	}
	buf := append([]byte(nil), old...)
	var env Envelope
	v := reflect.ValueOf(&env).Elem()
	strType := reflect.TypeOf(Str{})
	bytesType := reflect.TypeOf([]byte(nil))
	type span struct {
		name     string
		off, len int
	}
	var spans []span
	off := 7
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		var target reflect.Value
		switch f.Type() {
		case bytesType:
			target = f
		case strType:
			target = f.FieldByName("Raw")
			name += ".Raw"
		default:
			if f.Kind() == reflect.Slice || f.Kind() == reflect.Struct || f.Kind() == reflect.String || f.Kind() == reflect.Pointer {
				t.Fatalf("Envelope.%s (%s): a new kind of field; teach Rebase and this test about it", name, f.Type())
			}
			continue
		}
		n := 3 + i
		target.SetBytes(old[off : off+n])
		spans = append(spans, span{name, off, n})
		off += n + 11
	}
	if len(spans) < 13 {
		t.Fatalf("found %d span fields, expected at least 13", len(spans))
	}
	env.Rebase(old, buf)
	for _, s := range spans {
		var got []byte
		if f := v.FieldByName(s.name); f.IsValid() {
			got = f.Bytes()
		} else {
			got = v.FieldByName(s.name[:len(s.name)-4]).FieldByName("Raw").Bytes()
		}
		want := buf[s.off : s.off+s.len]
		if len(got) != len(want) || unsafe.SliceData(got) != unsafe.SliceData(want) {
			t.Errorf("Envelope.%s still aliases the old message after Rebase", s.name)
		}
		if cap(got) != len(got) {
			t.Errorf("Envelope.%s: capacity %d not clipped to its length %d", s.name, cap(got), len(got))
		}
	}
}

// TestEnvelopeRebaseAfterPeek: a peeked real message, rebased onto a copy,
// keeps every member readable after the original is overwritten (the
// clientInfo span was once left behind).
func TestEnvelopeRebaseAfterPeek(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":"r-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info","progressToken":"p-1"}}}`)
	var env Envelope
	if err := Peek(msg, &env); err != nil {
		t.Fatal(err)
	}
	cp := append([]byte(nil), msg...)
	env.Rebase(msg, cp)
	for i := range msg {
		msg[i] = 'X'
	}
	checks := []struct{ name, got, want string }{
		{"ID", string(env.ID), `"r-1"`},
		{"Method", env.Method.String(), "tools/call"},
		{"Name", env.Name.String(), "echo"},
		{"Arguments", string(env.Arguments), `{"text":"hi"}`},
		{"ProtocolVersion", env.ProtocolVersion.String(), "2026-07-28"},
		{"ClientCapabilities", string(env.ClientCapabilities), `{"sampling":{}}`},
		{"ClientInfo", string(env.ClientInfo), `{"name":"c","version":"1"}`},
		{"LogLevel", env.LogLevel.String(), "info"},
		{"ProgressToken", string(env.ProgressToken), `"p-1"`},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q after the original was overwritten, want %q", c.name, c.got, c.want)
		}
	}
	// A span that is not inside old is left alone.
	outside := []byte("elsewhere")
	env.Name.Raw = outside
	env.Rebase(msg, cp)
	if unsafe.SliceData(env.Name.Raw) != unsafe.SliceData(outside) {
		t.Error("Rebase moved a span that was not in old")
	}
}
