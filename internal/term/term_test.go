package term

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// hostile is what a server could put in a string to take over a terminal:
// CSI sequences (7-bit and the 8-bit C1 form), an OSC title change, a
// carriage return over the line, DEL, a bidirectional override, a line
// separator, and a byte that is not UTF-8; between printable text that
// must survive.
const hostile = "ok é ✓ 日本 😀 \x1b[2J\x1b]0;pwned\x07\r\u009b31m\x7f\u202egnp.exe\u2028\xff end"

const hostileSafe = `ok é ✓ 日本 😀 \x1b[2J\x1b]0;pwned\x07\r\u009b31m\x7f\u202egnp.exe\u2028\xff end`

func printable(s string) bool {
	for _, r := range s {
		if r != '\n' && !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func TestSafe(t *testing.T) {
	if got := Safe(hostile); got != hostileSafe {
		t.Errorf("Safe:\n got %s\nwant %s", got, hostileSafe)
	}
	if s := "plain text, ü ✓"; Safe(s) != s {
		t.Errorf("Safe changed %q", s)
	}
	if got := Safe("a\nb\tc"); got != `a\nb\tc` {
		t.Errorf("Safe newline: %q", got)
	}
}

func TestJSON(t *testing.T) {
	b, _ := json.MarshalIndent(map[string]string{"text": hostile}, "", "  ")
	safe := JSON(b)
	if !printable(string(safe)) {
		t.Fatalf("JSON left a control character: %q", safe)
	}
	var back map[string]string
	if err := json.Unmarshal(safe, &back); err != nil {
		t.Fatalf("JSON broke the JSON: %v\n%s", err, safe)
	}
	// The value is kept (encoding/json had already made the stray byte
	// U+FFFD).
	if want := strings.ToValidUTF8(hostile, "\ufffd"); back["text"] != want {
		t.Errorf("value changed:\n got %q\nwant %q", back["text"], want)
	}
	if !strings.Contains(string(safe), `\u202e`) || !strings.Contains(string(safe), `\u009b`) || !strings.Contains(string(safe), "😀") {
		t.Errorf("escapes: %s", safe)
	}
	if s := []byte("{\n  \"a\": \"日本\"\n}"); string(JSON(s)) != string(s) {
		t.Errorf("JSON changed %s", s)
	}
	if got := EscapeRune(0x1f600); got != `\ud83d\ude00` {
		t.Errorf("EscapeRune(U+1F600) = %s", got)
	}
}

// TestLineWriter: lines split across writes (even inside an escape
// sequence or a UTF-8 character) come out whole, escaped and prefixed;
// an over-long line is cut; Close writes the unfinished rest.
func TestLineWriter(t *testing.T) {
	var out strings.Builder
	lw := &LineWriter{W: &out, Prefix: "server: "}
	in := "first " + hostile + "\r\nsecond\n" + strings.Repeat("x", MaxLine+3) + "\nlast\x1b[0m"
	for i := 0; i < len(in); i += 5 {
		if _, err := lw.Write([]byte(in[i:min(i+5, len(in))])); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	want := "server: first " + hostileSafe + "\nserver: second\nserver: " + strings.Repeat("x", MaxLine) + "\nserver: xxx\nserver: last\\x1b[0m\n"
	if out.String() != want {
		t.Errorf("got\n%q\nwant\n%q", out.String(), want)
	}
	if !printable(out.String()) {
		t.Errorf("a control character reached the output")
	}
}

// FuzzLineWriter: whatever a program writes, in whatever pieces, the
// output is printable lines, each starting with the prefix and none
// longer than the prefix and an escaped MaxLine; Safe's output is
// printable too.
func FuzzLineWriter(f *testing.F) {
	f.Add([]byte("plain\nline\n"), uint8(3))
	f.Add([]byte(hostile+"\r\n"+hostile), uint8(1))
	f.Add([]byte("\xe6\x97\xa5\xe6\x9c\xac\n\xff\xfe"), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		if !printable(Safe(string(in))) {
			t.Fatalf("Safe(%q) not printable", in)
		}
		var out strings.Builder
		lw := &LineWriter{W: &out, Prefix: "p: "}
		n := int(step%16) + 1
		for i := 0; i < len(in); i += n {
			if _, err := lw.Write(in[i:min(i+n, len(in))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := lw.Close(); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if !printable(s) {
			t.Fatalf("output not printable: %q", s)
		}
		if s == "" {
			return
		}
		if !strings.HasSuffix(s, "\n") {
			t.Fatalf("output does not end a line: %q", s)
		}
		for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			if !strings.HasPrefix(l, "p: ") {
				t.Fatalf("line %q lacks the prefix", l)
			}
		}
	})
}
