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

var update = flag.Bool("update", false, "rewrite the documents' snippets from snippets_test.go")

// documents are the pages whose Go blocks are compiled snippets: the README
// and every page under docs/ (paths from this package's directory).
func documents(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../../README.md"}, pages...)
}

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

var (
	reMarker = regexp.MustCompile(`^<!-- snippet: ([\w-]+) -->$`)
	// reFile marks a Go block that is a whole program file of the module
	// (an example, built and run by its own test): the block equals the
	// file.
	reFile = regexp.MustCompile(`^<!-- file: ([\w./-]+\.go) -->$`)
)

// TestReadmeSnippets: every Go block of README.md and of the docs/ pages
// follows a "<!-- snippet: NAME -->" line and equals that snippet of
// snippets_test.go (compiled with the module), and every snippet appears in
// them once; or it follows a "<!-- file: PATH -->" line and equals that
// file of the module (a program with its own test). -update rewrites the
// blocks from the snippets and files.
func TestReadmeSnippets(t *testing.T) {
	snips := readSnippets(t)
	used := map[string]int{}
	for _, path := range documents(t) {
		checkDocument(t, path, snips, used)
	}
	for name := range snips {
		if used[name] != 1 {
			t.Errorf("snippet %q appears %d times in README.md and docs/, want once", name, used[name])
		}
	}
	_ = snippets // compiled, never run
}

// checkDocument checks (or, with -update, rewrites) the Go blocks of one
// page, counting the snippets it uses in used.
func checkDocument(t *testing.T, path string, snips map[string]string, used map[string]int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := strings.TrimPrefix(path, "../../")
	lines := strings.Split(string(b), "\n")
	var out []string
	changed := false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		out = append(out, l)
		if strings.TrimSpace(l) != "```go" {
			continue
		}
		// The marker is the nearest non-empty line before the fence.
		name, file := "", ""
		for j := i - 1; j >= 0; j-- {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			if m := reMarker.FindStringSubmatch(strings.TrimSpace(lines[j])); m != nil {
				name = m[1]
			}
			if m := reFile.FindStringSubmatch(strings.TrimSpace(lines[j])); m != nil {
				file = m[1]
			}
			break
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			t.Fatalf("%s:%d: unterminated Go block", page, i+1)
		}
		block := strings.Join(lines[i+1:end], "\n") + "\n"
		if file != "" {
			src, err := os.ReadFile(filepath.Join("../..", file))
			if err != nil {
				t.Fatalf("%s:%d: %v", page, i+1, err)
			}
			want := string(src)
			switch {
			case block == want:
			case *update:
				changed = true
				out = append(out, strings.Split(strings.TrimSuffix(want, "\n"), "\n")...)
				out = append(out, lines[end])
				i = end
				continue
			default:
				t.Errorf("%s:%d: the block differs from %s (go test ./internal/docs -update copies it):\n%s", page, i+1, file, diff(block, want))
			}
			out = append(out, lines[i+1:end+1]...)
			i = end
			continue
		}
		if name == "" {
			t.Errorf("%s:%d: a Go block without a <!-- snippet: NAME --> line before it (add the code to internal/docs/snippets_test.go)", page, i+1)
			out = append(out, lines[i+1:end+1]...)
			i = end
			continue
		}
		used[name]++
		want, ok := snips[name]
		switch {
		case !ok:
			t.Errorf("%s:%d: no snippet %q in snippets_test.go", page, i+1, name)
		case block != want && *update:
			changed = true
			out = append(out, strings.Split(strings.TrimSuffix(want, "\n"), "\n")...)
			out = append(out, lines[end])
			i = end
			continue
		case block != want:
			t.Errorf("%s:%d: snippet %q differs from snippets_test.go (go test ./internal/docs -update copies it):\n%s", page, i+1, name, diff(block, want))
		}
		out = append(out, lines[i+1:end+1]...)
		i = end
	}
	if changed {
		if err := os.WriteFile(filepath.Clean(path), []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s updated", page)
	}
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
			return fmt.Sprintf("line %d:\n  page:     %q\n  snippet:  %q", i+1, a, b)
		}
	}
	return "(trailing newline)"
}
