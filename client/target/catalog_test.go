package target_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/client/target"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/transport/streamhttp"
)

// The paged catalogue: thousands of entries in each list, 97 to a page
// (an odd size, so that no list ends on a page boundary by chance), and
// resources listed partly from a ResourceLister.
const (
	catTools     = 3000
	catPrompts   = 1500
	catResources = 1000 // registered
	catListed    = 4000 // from the lister
	catTemplates = 1200
	catPage      = 97
)

// newCatalog builds the paged catalogue's server.
func newCatalog() *engine.Server {
	listed := func(i int) string { return fmt.Sprintf("db://doc/%05d", i) }
	srv := engine.New(engine.Config{
		PageSize: catPage,
		// A keyset lister: its cursor is the last URI it returned.
		ResourceLister: func(c *engine.Call, cursor string, limit int) ([]mcp.Resource, string, error) {
			start := 0
			if cursor != "" {
				var i int
				if _, err := fmt.Sscanf(cursor, "db://doc/%05d", &i); err != nil || listed(i) != cursor {
					return nil, "", engine.ErrInvalidCursor
				}
				start = i + 1
			}
			var page []mcp.Resource
			for i := start; i < catListed && len(page) < limit; i++ {
				page = append(page, mcp.Resource{URI: listed(i), Name: "doc"})
			}
			if start+len(page) < catListed {
				return page, page[len(page)-1].URI, nil
			}
			return page, "", nil
		},
	})
	nop := func(c *engine.Call) error { c.Text("ok"); return nil }
	read := func(c *engine.Call, uri string, _ map[string]string) error {
		return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: "r"}}})
	}
	for i := 0; i < catTools; i++ {
		_ = srv.AddTool(engine.Tool{Name: fmt.Sprintf("tool_%05d", i), Description: "one of many", Handler: nop})
	}
	for i := 0; i < catPrompts; i++ {
		_ = srv.AddPrompt(engine.Prompt{Name: fmt.Sprintf("prompt_%05d", i), Handler: func(c *engine.Call) error { return c.Return(mcp.PromptResult{}) }})
	}
	for i := 0; i < catResources; i++ {
		_ = srv.AddResource(engine.Resource{URI: fmt.Sprintf("test://res/%05d", i), Name: "res", Handler: read})
	}
	for i := 0; i < catTemplates; i++ {
		_ = srv.AddResourceTemplate(engine.ResourceTemplate{URITemplate: fmt.Sprintf("test://tpl/%05d/{id}", i), Name: "tpl", Handler: read})
	}
	return srv
}

// startCatalogHTTP serves the paged catalogue on loopback over Streamable
// HTTP.
func startCatalogHTTP(t *testing.T) string {
	srv := newCatalog()
	hs := streamhttp.New(srv, streamhttp.Config{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		<-done
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

// TestClientListsPagedCatalogue: the client lists every entry of a
// catalogue of thousands that our server hands out in pages of 97 (one
// cursor after another, the lister's part included), each entry once and
// in order, over stdio and Streamable HTTP (schema: PaginatedResult).
func TestClientListsPagedCatalogue(t *testing.T) {
	for name, mk := range map[string]func(t *testing.T) string{
		"stdio": func(t *testing.T) string { return stdioTarget(t, "catalog") },
		"http":  startCatalogHTTP,
	} {
		t.Run(name, func(t *testing.T) {
			// The stdio child registers the whole catalogue before it reads
			// its first line (7 s of CPU under -race when each Add rebuilt
			// the lookup tables; far less since they are built once, on
			// the first read): an era probe that gives up after the default
			// 10 s would take the server for a legacy one on a loaded
			// machine. This test is about the listing, so the probe may
			// wait as long as the listing does.
			c := open(t, mk(t), target.Config{Client: client.Config{ProbeTimeout: 2 * time.Minute}})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			tools, err := c.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
			}
			check(t, "tools", names, catTools, "tool_%05d")
			for _, l := range []struct {
				method, key, member string
				want                []string
			}{
				{"prompts/list", "prompts", "name", seq(catPrompts, "prompt_%05d")},
				{"resources/list", "resources", "uri", append(seq(catResources, "test://res/%05d"), seq(catListed, "db://doc/%05d")...)},
				{"resources/templates/list", "resourceTemplates", "uriTemplate", seq(catTemplates, "test://tpl/%05d/{id}")},
			} {
				raw, err := c.List(ctx, l.method, l.key)
				if err != nil {
					t.Fatalf("%s: %v", l.method, err)
				}
				var got []string
				for _, r := range raw {
					var m map[string]any
					if err := json.Unmarshal(r, &m); err != nil {
						t.Fatal(err)
					}
					got = append(got, m[l.member].(string))
				}
				if !slices.Equal(got, l.want) {
					t.Fatalf("%s: %d entries (want %d); first %v", l.method, len(got), len(l.want), got[:min(3, len(got))])
				}
			}
		})
	}
}

func seq(n int, format string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

func check(t *testing.T, what string, got []string, n int, format string) {
	t.Helper()
	if want := seq(n, format); !slices.Equal(got, want) {
		t.Fatalf("%s: %d entries, want %d (%s…)", what, len(got), n, strings.Join(got[:min(3, len(got))], " "))
	}
}
