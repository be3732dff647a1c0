package main

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// What a server sends may reach a terminal through probe and call: a
// message, a schema, a tool description, a log line. Printed raw, an
// escape sequence in it could move the cursor, rewrite what was printed
// before or change the terminal's title, and a bidirectional override
// could make text read otherwise than it is. So every server string is
// printed through termSafe (text) or jsonSafe (JSON), which escape what
// is not printable and keep everything else, accents and CJK included.

// termSafe returns s with every character that is not printable (C0 and
// C1 controls, DEL, format characters such as bidirectional overrides,
// line and paragraph separators) and every byte that is not UTF-8
// written as a Go-style escape: \n, \t, \x1b, \u202e, \xff.
func termSafe(s string) string {
	if isSafe(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80 && !unicode.IsPrint(r):
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case !unicode.IsPrint(r):
			b.WriteString(escapeRune(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// errorText is the text of an error the command ends with, on one line:
// a safeError's as it is (ours, its server text already made safe), any
// other through termSafe, since it may quote the server (an RPC error's
// message, a tool name).
func errorText(err error) string {
	var safe *safeError
	if errors.As(err, &safe) {
		return safe.msg
	}
	return termSafe(err.Error())
}

// termLines is termSafe for text meant to span lines (a prompt, a
// message): each line is made safe and the lines after the first are
// indented, so no line the server wrote can pass for one of ours.
func termLines(s, indent string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = termSafe(l)
	}
	return strings.Join(lines, "\n"+indent)
}

// isSafe reports whether s is printable as it is.
func isSafe(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// jsonSafe returns the encoded JSON b with every character that is not
// printable written as a \u escape. Outside strings encoding/json writes
// only printable ASCII and, indented, newlines; inside, it already
// escapes C0 controls, so what is left to escape (DEL, C1 controls,
// format characters) can only be in strings, where \u is the same value.
func jsonSafe(b []byte) []byte {
	if isSafe(strings.ReplaceAll(string(b), "\n", "")) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == '\n' || (r != utf8.RuneError && unicode.IsPrint(r)) {
			out = append(out, b[i:i+n]...)
		} else {
			out = append(out, escapeRune(r)...)
		}
		i += n
	}
	return out
}

// escapeRune writes r as \uXXXX, or a UTF-16 surrogate pair of them.
func escapeRune(r rune) string {
	if r > 0xffff {
		r -= 0x10000
		return escapeRune(0xd800+(r>>10)) + escapeRune(0xdc00+(r&0x3ff))
	}
	h := strconv.FormatInt(int64(r), 16)
	return `\u` + strings.Repeat("0", 4-len(h)) + h
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}
