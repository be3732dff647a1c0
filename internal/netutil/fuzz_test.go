package netutil

import (
	"slices"
	"strings"
	"testing"
)

// FuzzSplitCommand: SplitCommand (the stdio: target, `load`) never panics
// and reads back what a careful caller writes: any list of words, each
// single-quoted with a quote inside written as '\” (POSIX shell quoting),
// joined by blanks, splits into the same words. Any input it accepts,
// quoted back that way, splits the same again.
func FuzzSplitCommand(f *testing.F) {
	for _, s := range []string{`mcpwire serve --stdio`, `'a b' "c \"d\" \$e" f\ g`, `''`, `""`, `a'b'"c"d`, `'unterminated`,
		`"unterminated`, `trailing\`, "tab\tand\nnewline", `"\x"`, `it'\''s`, "\x00 \xff"} {
		f.Add(s)
	}
	quote := func(words []string) string {
		q := make([]string, len(words))
		for i, w := range words {
			q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		return strings.Join(q, " \t")
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitCommand(s)
		if err != nil {
			return
		}
		again, err := SplitCommand(quote(words))
		if err != nil || !slices.Equal(again, words) {
			t.Fatalf("SplitCommand(%q) = %q; quoted back %q, it splits to %q, %v", s, words, quote(words), again, err)
		}
		if blanks := strings.Trim(s, " \t\n"); blanks == "" && len(words) != 0 {
			t.Fatalf("SplitCommand(%q) = %q from blanks only", s, words)
		}
	})
}
