package main

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

func printable(s string) bool {
	for _, r := range s {
		if r != '\n' && !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func TestTermSafe(t *testing.T) {
	got := termSafe(hostile)
	want := `ok é ✓ 日本 😀 \x1b[2J\x1b]0;pwned\x07\r\u009b31m\x7f\u202egnp.exe\u2028\xff end`
	if got != want {
		t.Errorf("termSafe:\n got %s\nwant %s", got, want)
	}
	if s := "plain text, ü ✓"; termSafe(s) != s {
		t.Errorf("termSafe changed %q", s)
	}
	if got := termSafe("a\nb\tc"); got != `a\nb\tc` {
		t.Errorf("termSafe newline: %q", got)
	}
	if got := termLines("line one\nline\x1b two", "    "); got != "line one\n    line\\x1b two" {
		t.Errorf("termLines: %q", got)
	}
}

func TestJSONSafe(t *testing.T) {
	b, _ := json.MarshalIndent(map[string]string{"text": hostile}, "", "  ")
	safe := jsonSafe(b)
	if !printable(string(safe)) {
		t.Fatalf("jsonSafe left a control character: %q", safe)
	}
	var back map[string]string
	if err := json.Unmarshal(safe, &back); err != nil {
		t.Fatalf("jsonSafe broke the JSON: %v\n%s", err, safe)
	}
	// The value is kept (encoding/json had already made the stray byte
	// U+FFFD).
	if want := strings.ToValidUTF8(hostile, "\ufffd"); back["text"] != want {
		t.Errorf("value changed:\n got %q\nwant %q", back["text"], want)
	}
	if !strings.Contains(string(safe), `\u202e`) || !strings.Contains(string(safe), `\u009b`) || !strings.Contains(string(safe), "😀") {
		t.Errorf("escapes: %s", safe)
	}
	if s := []byte("{\n  \"a\": \"日本\"\n}"); string(jsonSafe(s)) != string(s) {
		t.Errorf("jsonSafe changed %s", s)
	}
}
