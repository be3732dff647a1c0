package metrics

import (
	"context"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpwire/mcpwire/auth"
	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mrtr"
	"github.com/mcpwire/mcpwire/observe/admin"
	"github.com/mcpwire/mcpwire/state"
	"github.com/mcpwire/mcpwire/state/redisstate"
	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/socket"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

func typeKey(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

// statsTypes are the project's Stats types, with the subsystem serve
// --admin exports them under.
var statsTypes = []struct {
	sub string
	t   reflect.Type
}{
	{"engine", reflect.TypeFor[engine.Stats]()},
	{"http", reflect.TypeFor[streamhttp.Stats]()},
	{"socket", reflect.TypeFor[socket.Stats]()},
	{"legacy", reflect.TypeFor[legacy.Stats]()},
	{"mrtr", reflect.TypeFor[mrtr.Stats]()},
	{"redis", reflect.TypeFor[redisstate.Stats]()},
	{"oauth", reflect.TypeFor[auth.Stats]()},
	{"memory", reflect.TypeFor[state.MemoryStats]()},
	{"client_line", reflect.TypeFor[client.LineStats]()},
	{"admin", reflect.TypeFor[admin.Stats]()},
}

// exported reports whether AddStats or AddStatsFunc exports f.
func exported(f reflect.StructField) bool {
	if !f.IsExported() {
		return false
	}
	switch f.Type {
	case reflect.TypeFor[atomic.Uint64](), reflect.TypeFor[atomic.Int64]():
		return true
	}
	switch f.Type.Kind() {
	case reflect.Uint64, reflect.Int64, reflect.Int:
		return true
	}
	return reflect.PointerTo(f.Type).Implements(reflect.TypeFor[uint64Loader]()) // engine.Counter
}

var metricPart = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestEveryStatsFieldIsNamed: every exported counter or gauge field of
// every Stats type has a name and a HELP text of its own in names.go (a
// field added without one fails here, instead of getting a name made from
// its Go spelling), names are snake case, unique within their type, and
// no entry names a field that does not exist (issue 20).
func TestEveryStatsFieldIsNamed(t *testing.T) {
	if len(statNames) != len(statsTypes) {
		t.Errorf("names.go has %d types, the test knows %d", len(statNames), len(statsTypes))
	}
	for _, st := range statsTypes {
		names := statNames[typeKey(st.t)]
		if names == nil {
			t.Errorf("%s: no entry in names.go", typeKey(st.t))
			continue
		}
		seen := map[string]string{}
		fields := map[string]bool{}
		for i := 0; i < st.t.NumField(); i++ {
			f := st.t.Field(i)
			if !exported(f) {
				continue
			}
			fields[f.Name] = true
			n, ok := names[f.Name]
			if !ok {
				t.Errorf("%s.%s: no metric name in observe/metrics/names.go", st.t, f.Name)
				continue
			}
			if !metricPart.MatchString(n.name) || strings.HasSuffix(n.name, "_total") {
				t.Errorf("%s.%s: bad metric name %q", st.t, f.Name, n.name)
			}
			if other, dup := seen[n.name]; dup {
				t.Errorf("%s: %s and %s share the name %q", st.t, other, f.Name, n.name)
			}
			seen[n.name] = f.Name
			if len(n.help) < 10 || !strings.HasSuffix(n.help, ".") || strings.Contains(n.help, "mcpwire "+st.t.String()) {
				t.Errorf("%s.%s: HELP %q is not a sentence of its own", st.t, f.Name, n.help)
			}
		}
		for f := range names {
			if !fields[f] {
				t.Errorf("%s: names.go names %s, which is not an exported counter field", st.t, f)
			}
		}
	}
}

// TestDuplicateIDsName: engine.Stats.DuplicateIDs is exported as
// mcpwire_engine_duplicate_ids_total with its HELP text (the casing rule
// it replaced made it duplicate_i_ds).
func TestDuplicateIDsName(t *testing.T) {
	srv := engine.New(engine.Config{})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	srv.Stats().DuplicateIDs.Add(2)
	mfs := gather(t, Registry(New(srv)))
	mf := mfs["mcpwire_engine_duplicate_ids_total"]
	if mf == nil || mf.GetMetric()[0].GetCounter().GetValue() != 2 {
		t.Fatalf("mcpwire_engine_duplicate_ids_total: %v", mf)
	}
	if mf.GetHelp() != "Requests that reused the id of a request still in flight." {
		t.Errorf("HELP %q", mf.GetHelp())
	}
	for name := range mfs {
		if strings.Contains(name, "_i_d") {
			t.Errorf("%s: a name made by the casing rule", name)
		}
	}
}

// TestUnnamedFieldPanics: a struct of another package whose field has no
// name (no entry, no tags) is refused; one with metric and help tags is
// exported under them.
func TestUnnamedFieldPanics(t *testing.T) {
	srv := engine.New(engine.Config{})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	c := New(srv)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AddStats took a field without a name")
			}
		}()
		c.AddStats("bad", &struct{ SomeCount atomic.Uint64 }{})
	}()
	var tagged struct {
		Calls atomic.Uint64 `metric:"calls_made" help:"Calls made."`
	}
	tagged.Calls.Add(3)
	c.AddStats("mine", &tagged)
	mf := gather(t, Registry(c))["mcpwire_mine_calls_made_total"]
	if mf == nil || mf.GetHelp() != "Calls made." || mf.GetMetric()[0].GetCounter().GetValue() != 3 {
		t.Fatalf("tagged field: %v", mf)
	}
}

// TestOperationsDocListsMetrics: docs/operations.md names every metric
// serve --admin can export from a Stats type, and a metric's row of its
// own in the tables has its HELP text.
func TestOperationsDocListsMetrics(t *testing.T) {
	b, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, st := range statsTypes {
		if st.sub == "client_line" || st.sub == "memory" {
			continue // not exported by serve
		}
		for i := 0; i < st.t.NumField(); i++ {
			f := st.t.Field(i)
			if !exported(f) {
				continue
			}
			name := "mcpwire_" + st.sub + "_" + statNames[typeKey(st.t)][f.Name].name
			if reflect.PointerTo(f.Type).Implements(reflect.TypeFor[uint64Loader]()) { // atomic.Uint64, engine.Counter
				name += "_total"
			}
			if !strings.Contains(doc, "`"+name+"`") {
				t.Errorf("docs/operations.md does not list `%s` (%s.%s)", name, st.t, f.Name)
			} else if help := statNames[typeKey(st.t)][f.Name].help; strings.Contains(doc, "| `"+name+"` | ") &&
				!strings.Contains(doc, "| `"+name+"` | "+help+" |") {
				// A metric with a row of its own shows its HELP text there.
				t.Errorf("docs/operations.md lists `%s` with another text than its HELP %q", name, help)
			}
		}
	}
}
