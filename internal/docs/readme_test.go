package docs

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite README.md's snippets from snippets_test.go")

const readmePath = "../../README.md"

// readSnippets returns the snippets of snippets_test.go by name, each
// dedented by its first line's indentation.
func readSnippets(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("snippets_test.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	var name, indent string
	var body []string
	for i, l := range strings.Split(string(b), "\n") {
		trim := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(trim, "// snippet:begin "):
			if name != "" {
				t.Fatalf("snippets_test.go:%d: snippet %q not ended", i+1, name)
			}
			name, body = strings.TrimPrefix(trim, "// snippet:begin "), nil
			indent = l[:len(l)-len(strings.TrimLeft(l, "\t"))]
		case trim == "// snippet:end":
			if name == "" {
				t.Fatalf("snippets_test.go:%d: end without begin", i+1)
			}
			if _, dup := out[name]; dup {
				t.Fatalf("snippet %q twice", name)
			}
			out[name] = strings.Join(body, "\n") + "\n"
			name = ""
		case name != "":
			if l != "" && !strings.HasPrefix(l, indent) {
				t.Fatalf("snippets_test.go:%d: less indented than the snippet's first line", i+1)
			}
			body = append(body, strings.TrimPrefix(l, indent))
		}
	}
	if name != "" {
		t.Fatalf("snippet %q not ended", name)
	}
	return out
}

var reMarker = regexp.MustCompile(`^<!-- snippet: ([\w-]+) -->$`)

// TestReadmeSnippets: every Go block of README.md follows a
// "<!-- snippet: NAME -->" line and equals that snippet of
// snippets_test.go (compiled with the module), and every snippet appears
// in the README once. -update rewrites the blocks from the snippets.
func TestReadmeSnippets(t *testing.T) {
	snips := readSnippets(t)
	b, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	used := map[string]int{}
	var out []string
	changed := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		out = append(out, l)
		if strings.TrimSpace(l) != "```go" {
			continue
		}
		// The marker is the nearest non-empty line before the fence.
		name := ""
		for j := i - 1; j >= 0; j-- {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			if m := reMarker.FindStringSubmatch(strings.TrimSpace(lines[j])); m != nil {
				name = m[1]
			}
			break
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			t.Fatalf("README.md:%d: unterminated Go block", i+1)
		}
		block := strings.Join(lines[i+1:end], "\n") + "\n"
		if name == "" {
			t.Errorf("README.md:%d: a Go block without a <!-- snippet: NAME --> line before it (add the code to internal/docs/snippets_test.go)", i+1)
			out = append(out, lines[i+1:end+1]...)
			i = end
			continue
		}
		used[name]++
		want, ok := snips[name]
		switch {
		case !ok:
			t.Errorf("README.md:%d: no snippet %q in snippets_test.go", i+1, name)
		case block != want && *update:
			changed = true
			out = append(out, strings.Split(strings.TrimSuffix(want, "\n"), "\n")...)
			out = append(out, lines[end])
			i = end
			continue
		case block != want:
			t.Errorf("README.md:%d: snippet %q differs from snippets_test.go (go test ./internal/docs -update copies it):\n%s", i+1, name, diff(block, want))
		}
		out = append(out, lines[i+1:end+1]...)
		i = end
	}
	for name := range snips {
		if used[name] != 1 {
			t.Errorf("snippet %q appears %d times in README.md, want once", name, used[name])
		}
	}
	if changed {
		if err := os.WriteFile(filepath.Clean(readmePath), []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("README.md updated")
	}
	_ = snippets // compiled, never run
}

// diff shows the first differing line.
func diff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  README:   %q\n  snippet:  %q", i+1, a, b)
		}
	}
	return "(trailing newline)"
}
