package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
)

// listResources runs resources/list with a cursor ("" for the first
// page), as a transport would, prints the page's URIs and returns its
// nextCursor.
func listResources(s *engine.Server, cursor string) string {
	params := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if cursor != "" {
		params = `"cursor":"` + cursor + `",` + params
	}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{` + params + `}}`)
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		fmt.Println(err)
		return ""
	}
	rep := &pageReply{done: make(chan struct{})}
	r := engine.NewScope(s, "").Begin(context.Background(), msg, &env, rep, nil)
	if e := r.Check(); e != nil {
		fmt.Println("error:", e.Message)
		return ""
	}
	r.Run()
	<-rep.done
	return rep.next
}

// pageReply prints one page of resources/list.
type pageReply struct {
	next string
	done chan struct{}
}

func (*pageReply) Notify(*engine.Request, []byte) error { return nil }
func (p *pageReply) Done(*engine.Request)               { close(p.done) }
func (p *pageReply) Reply(_ *engine.Request, frame []byte, _ int) error {
	var r struct {
		Result *struct {
			Resources  []mcp.Resource `json:"resources"`
			NextCursor string         `json:"nextCursor"`
		}
		Error struct{ Message string }
	}
	_ = json.Unmarshal(frame, &r)
	if r.Result == nil {
		fmt.Println("error:", r.Error.Message)
		return nil
	}
	var uris []string
	for _, res := range r.Result.Resources {
		uris = append(uris, res.URI)
	}
	p.next = r.Result.NextCursor
	fmt.Printf("%s (more: %v)\n", strings.Join(uris, " "), p.next != "")
	return nil
}

// A server whose resources live in a store lists them with a
// ResourceLister, a page per request, after the resources registered one
// by one, and reads them with a ResourceReader. The lister pages by the
// last URI it returned (keyset paging), so any replica can serve the next
// page; the client sees only opaque cursors.
func ExampleConfig_resourceLister() {
	// The store: URIs in order, as an index would return them.
	docs := []string{"doc://a", "doc://b", "doc://c", "doc://d", "doc://e"}
	s := engine.New(engine.Config{
		PageSize: 2,
		ResourceLister: func(c *engine.Call, cursor string, limit int) ([]mcp.Resource, string, error) {
			// SELECT uri FROM docs WHERE uri > $cursor ORDER BY uri LIMIT $limit
			i := sort.SearchStrings(docs, cursor)
			if i < len(docs) && docs[i] == cursor {
				i++
			}
			var page []mcp.Resource
			for ; i < len(docs) && len(page) < limit; i++ {
				page = append(page, mcp.Resource{URI: docs[i], Name: strings.TrimPrefix(docs[i], "doc://")})
			}
			next := ""
			if i < len(docs) {
				next = page[len(page)-1].URI
			}
			return page, next, nil
		},
		ResourceReader: func(c *engine.Call, uri string) error {
			if i := sort.SearchStrings(docs, uri); i == len(docs) || docs[i] != uri {
				return engine.ErrResourceNotFound(uri)
			}
			return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: "…"}}})
		},
	})
	defer func() { _ = s.Shutdown(context.Background()) }()
	_ = s.AddResource(engine.Resource{URI: "config://main", Name: "main", Handler: func(c *engine.Call, uri string, _ map[string]string) error {
		return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: "{}"}}})
	}})

	cursor := ""
	for {
		if cursor = listResources(s, cursor); cursor == "" {
			break
		}
	}
	listResources(s, "not-a-cursor")
	// Output:
	// config://main doc://a (more: true)
	// doc://b doc://c (more: true)
	// doc://d doc://e (more: false)
	// error: Invalid params: invalid cursor
}

// RemoveResource takes a resource out of resources/list and
// resources/read, and tells listeners (notifications/resources/list_changed).
func ExampleServer_RemoveResource() {
	s := engine.New(engine.Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	read := func(c *engine.Call, uri string, _ map[string]string) error {
		return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: "…"}}})
	}
	_ = s.AddResource(engine.Resource{URI: "test://a", Name: "a", Handler: read})
	_ = s.AddResource(engine.Resource{URI: "test://b", Name: "b", Handler: read})
	listResources(s, "")
	fmt.Println(s.RemoveResource("test://a"), s.RemoveResource("test://a"))
	listResources(s, "")
	// Output:
	// test://a test://b (more: false)
	// true false
	// test://b (more: false)
}
