package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// This file tests the CLI as a careful client of a server it does not
// trust (issue 20, RELIABILITY F7 and D7), against the scripted servers of
// fakeserver_test.go.

// unprintable returns the first character of s a terminal would act on
// (anything not printable but the newline), or -1.
func unprintable(s string) rune {
	for _, r := range s {
		if r != '\n' && !unicode.IsPrint(r) {
			return r
		}
	}
	return -1
}

// TestServerTextEscaped: every string of a hostile server reaches the
// terminal with its control characters escaped: probe's text and JSON
// output (server info, instructions, tool, resource, template and prompt
// names and descriptions), call's progress messages and result, and the
// error line of a failed call or probe (RELIABILITY F7).
func TestServerTextEscaped(t *testing.T) {
	dir := t.TempDir()
	tgt := scriptTarget("hostile", dir)
	for i, args := range [][]string{
		{"probe", tgt},
		{"probe", "--json", tgt},
		{"call", tgt, "echo" + evil},
		{"call", tgt, "tools/list"},
		{"call", tgt, "fail"},
		{"call", "-v", "--log-level", "debug", tgt, "echo"}, // the server's stderr, log messages, stray lines
		{"probe", scriptTarget("refuse", t.TempDir())},
		{"call", scriptTarget("refuse", t.TempDir()), "echo"},
	} {
		out, errOut, code := mcpwire(t, args...)
		if r := unprintable(out); r >= 0 {
			t.Errorf("%d %v: stdout carries %U:\n%q", i, args[:len(args)-1], r, out)
		}
		if r := unprintable(errOut); r >= 0 {
			t.Errorf("%d %v: stderr carries %U:\n%q", i, args[:len(args)-1], r, errOut)
		}
		if !strings.Contains(out+errOut, `\x1b[2J`) && !strings.Contains(out+errOut, `\u001b[2J`) {
			t.Errorf("%d %v: the escaped server text is not shown (exit %d):\n%s\n%s", i, args[:len(args)-1], code, out, errOut)
		}
	}
	// The text probe shows each list's entries, escaped.
	out, _, _ := mcpwire(t, "probe", tgt)
	for _, want := range []string{`server:       scripted` + termSafe(evil), `  test://r1` + termSafe(evil), `prompts (5):`, `resource templates (1):`, `  test://t/{id}` + termSafe(evil)} {
		if !strings.Contains(out, want) {
			t.Errorf("probe output lacks %q:\n%s", want, out)
		}
	}
	// Progress is on stderr, escaped.
	_, errOut, code := mcpwire(t, "call", tgt, "echo")
	if code != 0 || !strings.Contains(errOut, "progress 1/2 half"+termSafe(evil)) {
		t.Errorf("progress: exit %d\n%s", code, errOut)
	}
}

// TestMarkupNotEscaped: a '<', '>' or '&' the server wrote is printed as
// such, not as \u003c (call's result, probe --json).
func TestMarkupNotEscaped(t *testing.T) {
	tgt := scriptTarget("hostile", t.TempDir())
	out, errOut, code := mcpwire(t, "call", tgt, "echo")
	if code != 0 || !strings.Contains(out, "<b>& <ok>") || strings.Contains(out, `\u003c`) || strings.Contains(out, `\u0026`) {
		t.Fatalf("call: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	out, _, _ = mcpwire(t, "probe", "--json", tgt)
	if !strings.Contains(out, " <b>&") || strings.Contains(out, `\u003c`) {
		t.Fatalf("probe --json escapes markup:\n%s", out)
	}
}

// TestCallErrorOneLine: a failed call prints its error once, as one line
// on stderr, and nothing on stdout (before: the error object on stdout
// and the same error on stderr).
func TestCallErrorOneLine(t *testing.T) {
	tgt := scriptTarget("hostile", t.TempDir())
	out, errOut, code := mcpwire(t, "call", tgt, "fail")
	if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "-32603") || !strings.Contains(errOut, "it broke") {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}

// TestProbeListsEverything: probe lists the resources, resource templates
// and prompts as well as the tools, every page of each (two to a page
// here).
func TestProbeListsEverything(t *testing.T) {
	out, errOut, code := mcpwire(t, "probe", "--json", scriptTarget("plain", t.TempDir()))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Tools, Resources, Prompts []probeEntry
		Templates                 []probeEntry `json:"resourceTemplates"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Tools) != 3 || len(rep.Resources) != 3 || len(rep.Templates) != 1 || len(rep.Prompts) != 5 {
		t.Fatalf("tools %d, resources %d, templates %d, prompts %d; want 3, 3, 1, 5:\n%s", len(rep.Tools), len(rep.Resources), len(rep.Templates), len(rep.Prompts), out)
	}
	if rep.Resources[2].URI != "test://r3" || rep.Templates[0].URITemplate != "test://t/{id}" || rep.Prompts[4].Name != "p5" {
		t.Fatalf("entries: %+v", rep)
	}
}

// TestProbeServerDiesOnce: a stdio server that dies during the version
// probe is started again and probed again, not taken for a legacy server:
// probe reports the modern era, and the server was started twice (before:
// three times, and the era legacy; RELIABILITY D7, STD-17).
func TestProbeServerDiesOnce(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := mcpwire(t, "probe", "--json", scriptTarget("dieonce", dir))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var rep struct{ Era string }
	_ = json.Unmarshal([]byte(out), &rep)
	if rep.Era != "modern" || spawns(dir) != 2 {
		t.Fatalf("era %q after %d starts, want modern after 2\n%s", rep.Era, spawns(dir), errOut)
	}
}

// TestCallResend: a stdio server that crashes while a call runs: without
// --resend the loss is reported (one line, naming --resend); with it the
// call is sent once more to the restarted server, and only once
// (RELIABILITY D2, STD-14).
func TestCallResend(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := mcpwire(t, "call", scriptTarget("crashcall", dir), "echo")
	if code != 1 || out != "" || strings.Count(errOut, "mcpwire: ") != 1 || !strings.Contains(errOut, "--resend") {
		t.Fatalf("without --resend: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	dir = t.TempDir()
	out, errOut, code = mcpwire(t, "call", "--resend", scriptTarget("crashcall", dir), "echo")
	if code != 0 || !strings.Contains(out, "result <ok>") || spawns(dir) != 2 || !strings.Contains(errOut, "once more") {
		t.Fatalf("with --resend: exit %d after %d starts\nstdout %s\nstderr %s", code, spawns(dir), out, errOut)
	}
	// Once: a server that dies at every call is not started a third time.
	dir = t.TempDir()
	out, errOut, code = mcpwire(t, "call", "--resend", scriptTarget("crashalways", dir), "echo")
	if code != 1 || out != "" || spawns(dir) != 2 || !strings.Contains(errOut, "lost again after --resend") {
		t.Fatalf("crashing twice: exit %d after %d starts\nstdout %s\nstderr %s", code, spawns(dir), out, errOut)
	}
}

// TestTimeoutSaysWhat: a timeout names what timed out and after how long:
// the version probe of a server that never answers, the call of a tool
// that never returns.
func TestTimeoutSaysWhat(t *testing.T) {
	// The silent server never answers: a short bound is enough. The
	// hanging tool's probe is answered, so its bound leaves room for a
	// slow start on a loaded machine. The measured time is whatever it
	// was: only its form is checked, the bound separately.
	_, errOut, code := mcpwire(t, "call", "--timeout", "1500ms", scriptTarget("silent", t.TempDir()), "echo")
	if code != 1 || !regexp.MustCompile(`the version probe timed out after [0-9.]+m?s`).MatchString(errOut) || !strings.Contains(errOut, "(--timeout 1.5s)") {
		t.Errorf("silent server: exit %d: %s", code, errOut)
	}
	_, errOut, code = mcpwire(t, "call", "--timeout", "4s", scriptTarget("plain", t.TempDir()), "hang")
	if code != 1 || !regexp.MustCompile(`tools/call hang timed out after [0-9.]+m?s`).MatchString(errOut) || !strings.Contains(errOut, "(--timeout 4s)") {
		t.Errorf("hanging tool: exit %d: %s", code, errOut)
	}
}

// TestConformanceClientEscapes: the hidden conformance-client prints the
// server's info and tool names escaped too (RELIABILITY F7).
func TestConformanceClientEscapes(t *testing.T) {
	t.Setenv("MCP_CONFORMANCE_SCENARIO", "request-metadata")
	out, errOut, code := mcpwire(t, "conformance-client", scriptTarget("hostile", t.TempDir()))
	if code != 0 || !strings.Contains(out, "server scripted"+termSafe(evil)) || !strings.Contains(out, "echo"+termSafe(evil)) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if r := unprintable(out + errOut); r >= 0 {
		t.Fatalf("output carries %U:\n%q\n%q", r, out, errOut)
	}
}
