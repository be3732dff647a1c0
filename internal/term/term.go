// Package term makes text from a server safe to print on a terminal.
//
// What a server sends may reach a terminal: a message, a schema, a tool
// description, a log line, its standard error. Printed raw, an escape
// sequence in it could move the cursor, rewrite what was printed before or
// change the terminal's title, and a bidirectional override could make
// text read otherwise than it is. Safe (text), JSON (encoded JSON) and
// LineWriter (a stream of lines) escape what is not printable and keep
// everything else, accents and CJK included.
package term

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Safe returns s with every character that is not printable (C0 and C1
// controls, DEL, format characters such as bidirectional overrides, line
// and paragraph separators) and every byte that is not UTF-8 written as a
// Go-style escape: \n, \t, \x1b, \u202e, \xff.
func Safe(s string) string {
	if IsSafe(s) {
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
			b.WriteString(EscapeRune(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// IsSafe reports whether s is printable as it is.
func IsSafe(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// JSON returns the encoded JSON b with every character that is not
// printable written as a \u escape. Outside strings encoding/json writes
// only printable ASCII and, indented, newlines; inside, it already escapes
// C0 controls, so what is left to escape (DEL, C1 controls, format
// characters) can only be in strings, where \u is the same value.
func JSON(b []byte) []byte {
	if IsSafe(strings.ReplaceAll(string(b), "\n", "")) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == '\n' || (r != utf8.RuneError && unicode.IsPrint(r)) {
			out = append(out, b[i:i+n]...)
		} else {
			out = append(out, EscapeRune(r)...)
		}
		i += n
	}
	return out
}

// EscapeRune writes r as \uXXXX, or a UTF-16 surrogate pair of them.
func EscapeRune(r rune) string {
	if r > 0xffff {
		r -= 0x10000
		return EscapeRune(0xd800+(r>>10)) + EscapeRune(0xdc00+(r&0x3ff))
	}
	h := strconv.FormatInt(int64(r), 16)
	return `\u` + strings.Repeat("0", 4-len(h)) + h
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// MaxLine is the longest line a LineWriter holds back: a longer one is
// written in pieces of this size, each on a line of its own.
const MaxLine = 64 << 10

// LineWriter is an io.Writer for another program's output (a server's
// standard error): it writes each line to W through Safe, after Prefix,
// ending it with a newline. Close writes what is left of an unfinished
// line. It is safe for concurrent use.
type LineWriter struct {
	W      io.Writer
	Prefix string

	mu  sync.Mutex
	buf []byte
}

// Write takes p whole; an error is W's.
func (lw *LineWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := strings.IndexByte(string(p), '\n')
		if i < 0 {
			room := MaxLine - len(lw.buf)
			if len(p) < room {
				lw.buf = append(lw.buf, p...)
				return n, nil
			}
			lw.buf = append(lw.buf, p[:room]...)
			p = p[room:]
		} else {
			lw.buf = append(lw.buf, p[:i]...)
			p = p[i+1:]
		}
		if err := lw.flush(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Close writes the unfinished line, if any. It does not close W.
func (lw *LineWriter) Close() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if len(lw.buf) == 0 {
		return nil
	}
	return lw.flush()
}

func (lw *LineWriter) flush() error {
	line := strings.TrimSuffix(string(lw.buf), "\r")
	lw.buf = lw.buf[:0]
	_, err := io.WriteString(lw.W, lw.Prefix+Safe(line)+"\n")
	return err
}
