package main

import (
	"errors"
	"strings"

	"github.com/mcpwire/mcpwire/internal/term"
)

// What a server sends may reach a terminal through probe and call: a
// message, a schema, a tool description, a log line. Printed raw, an
// escape sequence in it could move the cursor, rewrite what was printed
// before or change the terminal's title, and a bidirectional override
// could make text read otherwise than it is. So every server string is
// printed through termSafe (text) or jsonSafe (JSON), which escape what
// is not printable and keep everything else, accents and CJK included
// (package internal/term, shared with mcpwire load).

// termSafe is term.Safe: every character that is not printable and every
// byte that is not UTF-8 written as a Go-style escape.
func termSafe(s string) string { return term.Safe(s) }

// jsonSafe is term.JSON: encoded JSON with every character that is not
// printable written as a \u escape.
func jsonSafe(b []byte) []byte { return term.JSON(b) }

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
