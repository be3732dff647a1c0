// Package fuzzcheck holds the module's fuzz targets to their corpus rule:
// every `func FuzzX(f *testing.F)` has a non-empty testdata/fuzz/FuzzX/
// beside it, so `go test` (and with it `make test`) replays the inputs that
// once mattered on every run, with no timed fuzzing. It has tests only.
package fuzzcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFuzzCorpora fails for each fuzz target of the module without a
// committed corpus (CONTRIBUTING: "Every parser has a fuzz target with its
// corpus in testdata/fuzz/").
func TestFuzzCorpora(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/mcpwire/mcpwire/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	targets := 0
	for _, dir := range strings.Fields(string(out)) {
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		for _, file := range files {
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Fuzz") || !takesF(fn) {
					continue
				}
				targets++
				corpus := filepath.Join(dir, "testdata", "fuzz", fn.Name.Name)
				entries, err := os.ReadDir(corpus)
				if err != nil || len(entries) == 0 {
					rel, _ := filepath.Rel(root, file)
					t.Errorf("%s: %s has no corpus in testdata/fuzz/%[2]s (fuzz it, keep a few of the inputs it finds there)", rel, fn.Name.Name)
				}
			}
		}
	}
	if targets < 30 {
		t.Fatalf("found %d fuzz targets, want at least 30: the scan is broken", targets)
	}
}

// takesF reports whether fn's one parameter is a *testing.F.
func takesF(fn *ast.FuncDecl) bool {
	ps := fn.Type.Params.List
	if len(ps) != 1 {
		return false
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "F"
}
