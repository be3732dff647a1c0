// Package layers guards the package boundaries of README's package map:
// which layer may depend on which. Only non-test dependencies count (a
// transport's tests may drive it with the client). It has tests only.
package layers

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/mcpwire/mcpwire/"

// deps maps each package of the module (module-relative path) to its
// transitive dependencies, tests excluded.
func deps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, mod+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		m[strings.TrimPrefix(f[0], mod)] = f[1:]
	}
	for _, p := range []string{"engine", "mcp", "mrtr", "transport/streamhttp", "client", "client/streamhttp", "state", "observe/metrics"} {
		if _, ok := m[p]; !ok {
			t.Fatalf("go list does not name %s (%d packages listed)", p, len(m))
		}
	}
	return m
}

// under reports whether pkg is one of roots or inside one.
func under(pkg string, roots ...string) bool {
	for _, r := range roots {
		if pkg == r || strings.HasPrefix(pkg, r+"/") {
			return true
		}
	}
	return false
}

// The server transports. transport/linestream is not one of them: it is
// the line-connection core that stdio and socket share.
var transports = []string{"transport/stdio", "transport/socket", "transport/streamhttp", "transport/legacy"}

// check reports every package p with from(p) that depends on a package of
// the module d with bad(p, d) (both module-relative). Other modules'
// packages are passed to extern, when set, by their full path.
func check(t *testing.T, from func(p string) bool, bad func(p, d string) bool, extern func(d string) bool, why string) {
	t.Helper()
	seen := 0
	for p, ds := range deps(t) {
		if !from(p) {
			continue
		}
		seen++
		for _, d := range ds {
			rel, ours := strings.CutPrefix(d, mod)
			if ours && bad != nil && bad(p, rel) || !ours && extern != nil && extern(d) {
				t.Errorf("%s depends on %s: %s", p, d, why)
			}
		}
	}
	if seen == 0 {
		t.Fatalf("no package to check (%s)", why)
	}
}

func TestServerSideDoesNotLinkClient(t *testing.T) {
	check(t, func(p string) bool {
		return under(p, "transport", "engine", "mcp", "codec", "framing", "state", "observe", "auth")
	},
		func(_, d string) bool { return under(d, "client") }, nil, "the server side must not link client code")
}

func TestTransportsDoNotImportEachOther(t *testing.T) {
	check(t, func(p string) bool { return under(p, transports...) },
		func(p, d string) bool { return under(d, transports...) && !under(d, p) }, nil, "a transport shares lower layers, never another transport")
}

func TestModernPackagesDoNotImportLegacy(t *testing.T) {
	check(t, func(p string) bool { return !under(p, "transport/legacy", "cmd", "internal", "deploy", "examples") },
		func(_, d string) bool { return under(d, "transport/legacy") }, nil, "the 2026-07-28 path builds without the legacy layer")
}

func TestClientLinksNeitherFasthttpNorGnet(t *testing.T) {
	check(t, func(p string) bool { return under(p, "client") }, nil,
		func(d string) bool {
			return strings.HasPrefix(d, "github.com/valyala/fasthttp") || strings.HasPrefix(d, "github.com/panjf2000/gnet")
		}, "the client has its own HTTP/1.1 and line code")
}

func TestCoreKnowsNoOuterLayer(t *testing.T) {
	check(t, func(p string) bool { return under(p, "engine", "mcp", "codec", "framing", "state") },
		func(_, d string) bool {
			return under(d, "transport", "client", "observe", "cmd", "internal") && d != "internal/netutil"
		}, nil, "the core knows nothing of transports, clients or observability (internal/netutil is a leaf helper)")
}

func TestVocabularyCodecAndFramingStayLow(t *testing.T) {
	check(t, func(p string) bool { return under(p, "mcp", "codec", "framing") },
		func(_, d string) bool { return under(d, "engine", "state") }, nil, "the protocol vocabulary, codec and framing sit below the engine")
}

// The MRTR toolkit is handler-side: a handler uses it between the engine
// and the protocol vocabulary. It reaches no transport, client,
// observability or command code, even through another package, and
// imports none but engine, mcp and codec of the module itself (not state:
// what a state carries travels in the token, not in a store).
func TestMRTRToolkitIsHandlerSide(t *testing.T) {
	check(t, func(p string) bool { return under(p, "mrtr") },
		func(_, d string) bool {
			return under(d, "transport", "client", "observe", "cmd", "internal") && d != "internal/netutil"
		}, nil, "the MRTR toolkit is handler-side: no transport, client, observability or command code")
	out, err := exec.Command("go", "list", "-f", `{{range .Imports}}{{.}} {{end}}`, mod+"mrtr").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, d := range strings.Fields(string(out)) {
		if rel, ours := strings.CutPrefix(d, mod); ours && rel != "engine" && rel != "mcp" && rel != "codec" {
			t.Errorf("mrtr imports %s: it imports only engine, mcp and codec of this module", d)
		}
	}
}

// The OAuth resource-server kit sits beside the Streamable HTTP binding
// it plugs into: it reaches no client, command, observability or other
// transport code (internal/netutil is a leaf helper).
func TestAuthKitIsServerSide(t *testing.T) {
	check(t, func(p string) bool { return under(p, "auth") },
		func(_, d string) bool {
			return under(d, "client", "cmd", "observe") ||
				under(d, "internal") && d != "internal/netutil" ||
				under(d, transports...) && d != "transport/streamhttp"
		}, nil, "the auth kit is server-side: Streamable HTTP, the engine and the vocabulary only")
}

func TestTestHelpersOnlyInTests(t *testing.T) {
	helpers := []string{"internal/fixture", "internal/golden", "internal/redistest", "state/statetest", "internal/chart/charttest"}
	check(t, func(p string) bool { return !under(p, helpers...) },
		func(_, d string) bool { return under(d, helpers...) },
		func(d string) bool { return d == "testing" }, "test helpers (and package testing) are linked by tests only")
}
