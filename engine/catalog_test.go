package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
	"github.com/mcpwire/mcpwire/state"
)

// reply is one answer, kept whole: frame and HTTP status.
type reply struct {
	frame  []byte
	status int
}

// replyRec is a Replier that keeps the reply and its status.
type replyRec struct {
	mu   sync.Mutex
	r    reply
	done chan struct{}
}

func (r *replyRec) Notify(*Request, []byte) error { return nil }
func (r *replyRec) Reply(_ *Request, frame []byte, status int) error {
	r.mu.Lock()
	r.r = reply{append([]byte(nil), frame...), status}
	r.mu.Unlock()
	return nil
}
func (r *replyRec) Done(*Request) { close(r.done) }

// rpc runs one request (params given without _meta, "" for none) through
// Begin, Check and Start, and returns its answer, as a transport would.
func rpc(t testing.TB, s *Server, method, params string) reply {
	t.Helper()
	p := testMeta
	if params != "" {
		p = params + "," + testMeta
	}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + p + `}}`)
	var env codec.Envelope
	if err := codec.Peek(msg, &env); err != nil {
		t.Fatalf("peek %s: %v", msg, err)
	}
	rep := &replyRec{done: make(chan struct{})}
	r := NewScope(s, "").Begin(context.Background(), msg, &env, rep, nil)
	if e := r.Check(); e != nil {
		r.Fail(e)
	} else {
		r.Start()
	}
	<-rep.done
	rep.mu.Lock()
	defer rep.mu.Unlock()
	return rep.r
}

// page is a decoded list result.
type page struct {
	Result *struct {
		ResultType string            `json:"resultType"`
		Items      []json.RawMessage `json:"-"`
		NextCursor *string           `json:"nextCursor"`
		TTL        *int              `json:"ttlMs"`
		Scope      string            `json:"cacheScope"`
		Meta       json.RawMessage   `json:"_meta"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw map[string]json.RawMessage
}

// listField names each method's result member.
var listFields = map[string]string{
	"tools/list":               "tools",
	"prompts/list":             "prompts",
	"resources/list":           "resources",
	"resources/templates/list": "resourceTemplates",
}

// listKey is what a list sorts by.
var listKeys = map[string]string{
	"tools/list":               "name",
	"prompts/list":             "name",
	"resources/list":           "uri",
	"resources/templates/list": "uriTemplate",
}

func decodePage(t testing.TB, method string, b []byte) page {
	t.Helper()
	var p page
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if p.Result == nil {
		return p
	}
	var res map[string]json.RawMessage
	var outer struct {
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(b, &outer)
	_ = json.Unmarshal(outer.Result, &res)
	if err := json.Unmarshal(res[listFields[method]], &p.Result.Items); err != nil || p.Result.Items == nil {
		t.Fatalf("%s: no %s array: %s", method, listFields[method], b)
	}
	if p.Result.ResultType != "complete" || p.Result.TTL == nil || p.Result.Scope == "" ||
		!strings.Contains(string(p.Result.Meta), "io.modelcontextprotocol/serverInfo") {
		t.Fatalf("%s: page without resultType, cache hints or serverInfo: %s", method, b)
	}
	p.raw = res
	return p
}

// keysOf returns each item's sort key.
func keysOf(t testing.TB, method string, items []json.RawMessage) []string {
	var out []string
	for _, it := range items {
		var m map[string]any
		if err := json.Unmarshal(it, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m[listKeys[method]].(string))
	}
	return out
}

// listAll pages through method, from the cursor given ("" for the first
// page), and returns every key and the number of pages.
func listAll(t testing.TB, s *Server, method, cursor string) ([]string, int) {
	t.Helper()
	var keys []string
	for pages := 1; ; pages++ {
		params := ""
		if cursor != "" {
			params = `"cursor":` + strconv.Quote(cursor)
		}
		p := decodePage(t, method, rpc(t, s, method, params).frame)
		if p.Error != nil {
			t.Fatalf("%s page %d: %d %s", method, pages, p.Error.Code, p.Error.Message)
		}
		keys = append(keys, keysOf(t, method, p.Result.Items)...)
		if p.Result.NextCursor == nil {
			return keys, pages
		}
		if *p.Result.NextCursor == "" || *p.Result.NextCursor == cursor {
			t.Fatalf("%s: bad next cursor %q after %q", method, *p.Result.NextCursor, cursor)
		}
		if pages > 100000 {
			t.Fatal("no end")
		}
		cursor = *p.Result.NextCursor
	}
}

func nopResource(c *Call, uri string, _ map[string]string) error {
	return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: "r"}}})
}

func nopTool(c *Call) error { c.Text("ok"); return nil }

func nopPrompt(c *Call) error { return c.Return(mcp.PromptResult{}) }

// catalogServer registers n entries in each of the four lists, in an
// order that is not the key order.
func catalogServer(t testing.TB, opt Config, n int) *Server {
	t.Helper()
	s := New(opt)
	t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
	for i := n - 1; i >= 0; i-- {
		must(t, s.AddTool(Tool{Name: fmt.Sprintf("tool-%05d", i), Handler: nopTool, SkipValidation: true}))
		must(t, s.AddPrompt(Prompt{Name: fmt.Sprintf("prompt-%05d", i), Handler: nopPrompt}))
		must(t, s.AddResource(Resource{URI: fmt.Sprintf("test://r/%05d", i), Name: "r", Handler: nopResource}))
		must(t, s.AddResourceTemplate(ResourceTemplate{URITemplate: fmt.Sprintf("test://t/%05d/{id}", i), Name: "t", Handler: nopResource}))
	}
	return s
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// expected returns the keys method lists on a catalogServer of n.
func expected(method string, n int) []string {
	f := map[string]string{"tools/list": "tool-%05d", "prompts/list": "prompt-%05d",
		"resources/list": "test://r/%05d", "resources/templates/list": "test://t/%05d/{id}"}[method]
	out := []string{}
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf(f, i))
	}
	return out
}

var listMethods = []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"}

// TestListPages: every list method pages through its whole catalogue in
// key order, each entry once; a page holds at most PageSize entries; the
// last page has no nextCursor; every page carries resultType, the cache
// hints and serverInfo (schema: PaginatedResult, CacheableResult).
func TestListPages(t *testing.T) {
	for _, n := range []int{1, 2, 5, 10, 23} {
		for _, size := range []int{1, 2, 3, 5, 10, 0, -1} {
			s := catalogServer(t, Config{PageSize: size}, n)
			for _, m := range listMethods {
				keys, pages := listAll(t, s, m, "")
				if want := expected(m, n); strings.Join(keys, " ") != strings.Join(want, " ") {
					t.Fatalf("n=%d size=%d %s: %v, want %v", n, size, m, keys, want)
				}
				wantPages := 1
				if size > 0 {
					wantPages = max(1, (n+size-1)/size)
				}
				if pages != wantPages {
					t.Errorf("n=%d size=%d %s: %d pages, want %d", n, size, m, pages, wantPages)
				}
			}
		}
	}
}

// TestListPageBoundaries: with PageSize 3 and 6 entries, the first page
// holds entries 0-2 and a cursor, the second 3-5 and none (no empty third
// page); with 7, a third page holds the last one.
func TestListPageBoundaries(t *testing.T) {
	for _, n := range []int{6, 7} {
		s := catalogServer(t, Config{PageSize: 3}, n)
		for _, m := range listMethods {
			p := decodePage(t, m, rpc(t, s, m, "").frame)
			if len(p.Result.Items) != 3 || p.Result.NextCursor == nil {
				t.Fatalf("%s n=%d: first page %d items, cursor %v", m, n, len(p.Result.Items), p.Result.NextCursor)
			}
			p = decodePage(t, m, rpc(t, s, m, `"cursor":"`+*p.Result.NextCursor+`"`).frame)
			if len(p.Result.Items) != 3 || (p.Result.NextCursor == nil) != (n == 6) {
				t.Fatalf("%s n=%d: second page %d items, cursor %v", m, n, len(p.Result.Items), p.Result.NextCursor)
			}
		}
	}
}

// TestListEmpty: a list with no entries (resources/list with templates
// only, templates/list with resources only) is one empty page without a
// cursor; the cached first page of an empty catalogue too.
func TestListEmpty(t *testing.T) {
	s := New(Config{PageSize: 1})
	defer func() { _ = s.Shutdown(context.Background()) }()
	must(t, s.AddResourceTemplate(ResourceTemplate{URITemplate: "test://t/{id}", Name: "t", Handler: nopResource}))
	p := decodePage(t, "resources/list", rpc(t, s, "resources/list", "").frame)
	if len(p.Result.Items) != 0 || p.Result.NextCursor != nil {
		t.Fatalf("empty resources/list: %+v", p.Result)
	}
	s.RemoveResourceTemplate("test://t/{id}")
	must(t, s.AddResource(Resource{URI: "test://r", Name: "r", Handler: nopResource}))
	p = decodePage(t, "resources/templates/list", rpc(t, s, "resources/templates/list", "").frame)
	if len(p.Result.Items) != 0 || p.Result.NextCursor != nil {
		t.Fatalf("empty resources/templates/list: %+v", p.Result)
	}
}

// TestListCursorOnReplica: a cursor from one Server continues on another
// with the same catalogue (stateless replicas behind a balancer), page by
// page, alternating.
func TestListCursorOnReplica(t *testing.T) {
	a := catalogServer(t, Config{PageSize: 4}, 30)
	b := catalogServer(t, Config{PageSize: 4}, 30)
	for _, m := range listMethods {
		var keys []string
		cursor := ""
		for i := 0; ; i++ {
			s := []*Server{a, b}[i%2]
			params := ""
			if cursor != "" {
				params = `"cursor":"` + cursor + `"`
			}
			p := decodePage(t, m, rpc(t, s, m, params).frame)
			keys = append(keys, keysOf(t, m, p.Result.Items)...)
			if p.Result.NextCursor == nil {
				break
			}
			cursor = *p.Result.NextCursor
		}
		if strings.Join(keys, " ") != strings.Join(expected(m, 30), " ") {
			t.Fatalf("%s across replicas: %v", m, keys)
		}
	}
}

// TestListChangesBetweenPages: the listing goes on after the last key
// sent, in the catalogue as it is then: entries removed ahead are not
// listed, entries added ahead are, entries added behind are not, and
// nothing present throughout is listed twice or missed.
func TestListChangesBetweenPages(t *testing.T) {
	s := catalogServer(t, Config{PageSize: 4}, 10)
	p := decodePage(t, "tools/list", rpc(t, s, "tools/list", "").frame)
	first := keysOf(t, "tools/list", p.Result.Items)                // tool-00000 … 00003
	s.RemoveTool("tool-00003")                                      // the page's last key: the cursor still works
	s.RemoveTool("tool-00005")                                      // ahead: not listed
	must(t, s.AddTool(Tool{Name: "tool-00001x", Handler: nopTool})) // behind: not listed
	must(t, s.AddTool(Tool{Name: "tool-00007x", Handler: nopTool})) // ahead: listed
	rest, _ := listAll(t, s, "tools/list", *p.Result.NextCursor)
	got := strings.Join(append(first, rest...), " ")
	want := "tool-00000 tool-00001 tool-00002 tool-00003 tool-00004 tool-00006 tool-00007 tool-00007x tool-00008 tool-00009"
	if got != want {
		t.Fatalf("listing across changes:\n got %s\nwant %s", got, want)
	}
	// The whole catalogue removed: the next page is empty and the last.
	for _, k := range append(expected("tools/list", 10), "tool-00001x", "tool-00007x") {
		s.RemoveTool(k)
	}
	must(t, s.AddTool(Tool{Name: "a", Handler: nopTool}))
	p = decodePage(t, "tools/list", rpc(t, s, "tools/list", `"cursor":"`+*p.Result.NextCursor+`"`).frame)
	if len(p.Result.Items) != 0 || p.Result.NextCursor != nil {
		t.Fatalf("after the end: %+v", p.Result)
	}
}

// cursorOf encodes a cursor the way the engine does.
func cursorOf(kind byte, key string) string {
	b, _ := appendCursor(nil, nil, kind, key)
	return string(b)
}

// TestHostileCursors: a cursor that is not a string, too long, not
// base64url, of nonsense, cut, altered, of another list or another format
// is -32602 "Invalid params: …" (TRANSPORTS §1.4, bad cursor), counted in
// Stats.InvalidCursors and InvalidParams, and never reaches the handler.
func TestHostileCursors(t *testing.T) {
	s := catalogServer(t, Config{PageSize: 2}, 5)
	good := cursorOf(cursorTools, "tool-00001")
	flip := []byte(good)
	flip[3] ^= 1
	nonsense := base64.RawURLEncoding.EncodeToString([]byte("\x01Tnot a cursor at all"))
	for i, tc := range []struct {
		method, cursor, want string
	}{
		{"tools/list", `""`, "invalid cursor"},
		{"tools/list", `"abc"`, "invalid cursor"},
		{"tools/list", `"!!!!"`, "invalid cursor"},
		{"tools/list", `"` + good + `="`, "invalid cursor"},
		{"tools/list", `"` + good[:len(good)-2] + `"`, "invalid cursor"},
		{"tools/list", `"` + string(flip) + `"`, "invalid cursor"},
		{"tools/list", `"` + nonsense + `"`, "invalid cursor"},
		{"tools/list", `"` + base64.RawURLEncoding.EncodeToString([]byte("2")) + `"`, "invalid cursor"},
		{"tools/list", `"` + base64.StdEncoding.EncodeToString([]byte(`{"offset":2}`)) + `"`, "invalid cursor"},
		{"tools/list", `"` + cursorOf(cursorTools, "") + `"`, "invalid cursor"},
		{"tools/list", `"` + cursorOf('Z', "tool-00001") + `"`, "invalid cursor"},
		{"tools/list", `"` + strings.Repeat("A", maxCursor+1) + `"`, "cursor too long"},
		{"tools/list", `"` + strings.Repeat("\\u0041", maxCursor) + `"`, "cursor too long"},
		{"tools/list", `2`, "cursor must be a string"},
		{"tools/list", `null`, "cursor must be a string"},
		{"tools/list", `{"k":"v"}`, "cursor must be a string"},
		{"tools/list", `["` + good + `"]`, "cursor must be a string"},
		{"prompts/list", `"` + good + `"`, "cursor belongs to another list"},
		{"resources/list", `"` + cursorOf(cursorTemplates, "x") + `"`, "cursor belongs to another list"},
		{"resources/templates/list", `"` + cursorOf(cursorResources, "x") + `"`, "cursor belongs to another list"},
		{"tools/list", `"` + cursorOf(cursorPrompts, "prompt-00001") + `"`, "cursor belongs to another list"},
		// A ResourceLister's cursor where no lister is configured.
		{"resources/list", `"` + cursorOf(cursorLister, "page2") + `"`, "cursor belongs to another list"},
	} {
		before, beforeP := s.Stats().InvalidCursors.Load(), s.Stats().InvalidParams.Load()
		p := decodePage(t, tc.method, rpc(t, s, tc.method, `"cursor":`+tc.cursor).frame)
		if p.Error == nil || p.Error.Code != -32602 || p.Error.Message != "Invalid params: "+tc.want {
			t.Errorf("%d: %s with cursor %.60s: %+v", i, tc.method, tc.cursor, p.Error)
		}
		if s.Stats().InvalidCursors.Load() != before+1 || s.Stats().InvalidParams.Load() != beforeP+1 {
			t.Errorf("%d: not counted", i)
		}
	}
	// The same cursor escaped in JSON is the same cursor.
	esc := `"\u` + fmt.Sprintf("%04x", good[0]) + good[1:] + `"`
	p := decodePage(t, "tools/list", rpc(t, s, "tools/list", `"cursor":`+esc).frame)
	if p.Error != nil || keysOf(t, "tools/list", p.Result.Items)[0] != "tool-00002" {
		t.Fatalf("escaped cursor: %+v", p)
	}
}

// TestToolFilterPages: with a ToolFilter each caller pages through the
// tools it may see, PageSize at a time, with cacheScope "private"; the
// last visible tool ends the listing (no empty page for hidden ones after
// it); a hidden tool's name as the cursor position changes nothing.
func TestToolFilterPages(t *testing.T) {
	filter := func(c *Call, tl *Tool) bool {
		n, _ := strconv.Atoi(strings.TrimPrefix(tl.Name, "tool-"))
		return n%3 == 0 || n == 19
	}
	for _, size := range []int{1, 2, 4, -1} {
		s := catalogServer(t, Config{PageSize: size, ToolFilter: filter, CacheScope: "public"}, 20)
		var keys []string
		cursor := ""
		pages := 0
		for {
			params := ""
			if cursor != "" {
				params = `"cursor":"` + cursor + `"`
			}
			p := decodePage(t, "tools/list", rpc(t, s, "tools/list", params).frame)
			pages++
			if p.Result.Scope != "private" {
				t.Fatalf("filtered page with cacheScope %q", p.Result.Scope)
			}
			if size > 0 && len(p.Result.Items) > size || len(p.Result.Items) == 0 {
				t.Fatalf("size %d: page of %d", size, len(p.Result.Items))
			}
			keys = append(keys, keysOf(t, "tools/list", p.Result.Items)...)
			if p.Result.NextCursor == nil {
				break
			}
			cursor = *p.Result.NextCursor
		}
		want := "tool-00000 tool-00003 tool-00006 tool-00009 tool-00012 tool-00015 tool-00018 tool-00019"
		if got := strings.Join(keys, " "); got != want {
			t.Fatalf("size %d: %s", size, got)
		}
		if size == 2 && pages != 4 {
			t.Fatalf("size 2: %d pages, want 4", pages)
		}
	}
	// A caller who sees nothing gets one empty page.
	s := catalogServer(t, Config{PageSize: 2, ToolFilter: func(*Call, *Tool) bool { return false }}, 5)
	p := decodePage(t, "tools/list", rpc(t, s, "tools/list", "").frame)
	if len(p.Result.Items) != 0 || p.Result.NextCursor != nil {
		t.Fatalf("nothing visible: %+v", p.Result)
	}
}

// TestRemoveResource: RemoveResource and RemoveResourceTemplate take the
// entry out of its list and of resources/read, report whether it existed,
// and notify resources/list_changed only then.
func TestRemoveResource(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	must(t, s.AddResource(Resource{URI: "test://a", Name: "a", Handler: nopResource}))
	must(t, s.AddResource(Resource{URI: "test://b", Name: "b", Handler: nopResource}))
	must(t, s.AddResourceTemplate(ResourceTemplate{URITemplate: "test://t/{id}", Name: "t", Handler: nopResource}))
	must(t, s.AddResourceTemplate(ResourceTemplate{URITemplate: "test://{any}", Name: "any", Handler: nopResource}))
	rec := newStreamRec()
	send(t, s, rec, `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true},`+metaJSON+`}}`)
	rec.waitCount(t, "acknowledged", 1)
	const cue = "notifications/resources/list_changed"

	if !s.RemoveResource("test://a") || s.RemoveResource("test://a") || s.RemoveResource("test://none") {
		t.Fatal("RemoveResource results")
	}
	rec.waitCount(t, cue, 1)
	if keys, _ := listAll(t, s, "resources/list", ""); strings.Join(keys, " ") != "test://b" {
		t.Fatalf("resources after removal: %v", keys)
	}
	// test://a now falls to the test://{any} template.
	if r := rpc(t, s, "resources/read", `"uri":"test://a"`); !strings.Contains(string(r.frame), `"text":"r"`) {
		t.Fatalf("read after removal: %s", r.frame)
	}
	if !s.RemoveResourceTemplate("test://{any}") || s.RemoveResourceTemplate("test://{any}") {
		t.Fatal("RemoveResourceTemplate results")
	}
	rec.waitCount(t, cue, 2)
	if r := rpc(t, s, "resources/read", `"uri":"test://a"`); !strings.Contains(string(r.frame), `"Resource not found"`) {
		t.Fatalf("read after the template's removal: %s", r.frame)
	}
	if keys, _ := listAll(t, s, "resources/templates/list", ""); strings.Join(keys, " ") != "test://t/{id}" {
		t.Fatalf("templates after removal: %v", keys)
	}
	// Adding a template again replaces it (one entry, the new handler).
	must(t, s.AddResourceTemplate(ResourceTemplate{URITemplate: "test://t/{id}", Name: "t2", Handler: func(c *Call, uri string, _ map[string]string) error {
		return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: "new"}}})
	}}))
	rec.waitCount(t, cue, 3)
	if keys, _ := listAll(t, s, "resources/templates/list", ""); len(keys) != 1 {
		t.Fatalf("templates after replacement: %v", keys)
	}
	if r := rpc(t, s, "resources/read", `"uri":"test://t/1"`); !strings.Contains(string(r.frame), `"text":"new"`) {
		t.Fatalf("read after replacement: %s", r.frame)
	}
	// The last resource and template gone: the capability goes too.
	s.RemoveResource("test://b")
	s.RemoveResourceTemplate("test://t/{id}")
	rec.waitCount(t, cue, 5)
	if r := decodePage(t, "resources/list", rpc(t, s, "resources/list", "").frame); r.Error == nil || r.Error.Code != -32601 {
		t.Fatalf("resources/list without resources: %+v", r)
	}
}

// TestRemoveResourceReplicas: every replica of a fleet makes a registry
// change itself, and each replica's listeners hear of it once (not once
// per replica through the backplane); a change of a shared store,
// announced once with ResourcesChanged, reaches every replica's listeners
// once, the announcing replica's included.
func TestRemoveResourceReplicas(t *testing.T) {
	br := &fakeBroker{}
	a, b := newReplica(t, br.replica()), newReplica(t, br.replica())
	for _, s := range []*Server{a, b} {
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	la, lb := newStreamRec(), newStreamRec()
	for i, p := range []struct {
		s   *Server
		rec *streamRec
	}{{a, la}, {b, lb}} {
		send(t, p.s, p.rec, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true},%s}}`, i+1, metaJSON))
		p.rec.waitCount(t, "acknowledged", 1)
	}
	const cue = "notifications/resources/list_changed"
	for _, s := range []*Server{a, b} {
		if !s.RemoveResource("test://r") {
			t.Fatal("not removed")
		}
	}
	la.waitCount(t, cue, 1)
	lb.waitCount(t, cue, 1)
	if err := a.ResourcesChanged(); err != nil {
		t.Fatal(err)
	}
	la.waitCount(t, cue, 2)
	lb.waitCount(t, cue, 2)
	if got := a.Stats().Published.Load() + b.Stats().Published.Load(); got != 1 {
		t.Fatalf("%d cues published, want 1 (ResourcesChanged only)", got)
	}
}

// lister is a ResourceLister over n resources test://db/00000… that pages
// by the last URI returned (keyset), as a database-backed one would.
type lister struct {
	mu    sync.Mutex
	n     int
	calls []string // "cursor/limit" of each call
	err   error
	// rows and next, when set (preload), are every resource and the next
	// cursor after each, made once: a page then costs the lister nothing,
	// and a benchmark measures the engine alone.
	rows []mcp.Resource
	next []string
}

func (l *lister) preload() *lister {
	for i := 0; i < l.n; i++ {
		l.rows = append(l.rows, mcp.Resource{URI: l.uri(i), Name: "db"})
		l.next = append(l.next, "after:"+l.uri(i))
	}
	return l
}

func (l *lister) uri(i int) string { return fmt.Sprintf("test://db/%05d", i) }

func (l *lister) list(c *Call, cursor string, limit int) ([]mcp.Resource, string, error) {
	l.mu.Lock()
	l.calls = append(l.calls, cursor+"/"+strconv.Itoa(limit))
	err := l.err
	l.mu.Unlock()
	if err != nil {
		return nil, "", err
	}
	start := 0
	if cursor != "" {
		if !strings.HasPrefix(cursor, "after:") {
			return nil, "", ErrInvalidCursor
		}
		last := cursor[len("after:"):]
		i, err := strconv.Atoi(strings.TrimPrefix(last, "test://db/"))
		if err != nil || last != l.uri(i) {
			return nil, "", ErrInvalidCursor
		}
		start = i + 1
	}
	if l.rows != nil {
		end := min(start+limit, l.n)
		if end < l.n {
			return l.rows[start:end], l.next[end-1], nil
		}
		return l.rows[start:end], "", nil
	}
	page := make([]mcp.Resource, 0, min(limit, max(0, l.n-start)))
	for i := start; i < l.n && len(page) < limit; i++ {
		page = append(page, mcp.Resource{URI: l.uri(i), Name: "db"})
	}
	next := ""
	if len(page) == limit && start+limit < l.n {
		next = "after:" + page[len(page)-1].URI
	}
	return page, next, nil
}

func (l *lister) all() []string {
	out := make([]string, l.n)
	for i := range out {
		out[i] = l.uri(i)
	}
	return out
}

// TestResourceLister: resources/list gives the registered resources, then
// the lister's pages; the lister is asked for what is left of the page,
// then for PageSize; its cursor travels opaque and comes back unchanged;
// pages work across replicas; with paging off the lister still pages.
func TestResourceLister(t *testing.T) {
	for _, tc := range []struct {
		size, registered, listed int
		calls                    string
	}{
		{size: 4, registered: 0, listed: 10, calls: "/4 after:test://db/00003/4 after:test://db/00007/4"},
		{size: 4, registered: 2, listed: 5, calls: "/2 after:test://db/00001/4"},
		{size: 4, registered: 4, listed: 3, calls: "/4"}, // the registered fill page 1: the lister starts page 2
		{size: 4, registered: 6, listed: 0, calls: "/2"}, // an empty lister
		{size: -1, registered: 3, listed: 2500, calls: "/1000 after:test://db/00999/1000 after:test://db/01999/1000"},
		{size: 0, registered: 1, listed: 10, calls: "/999"},
	} {
		l := &lister{n: tc.listed}
		mk := func() *Server {
			s := New(Config{PageSize: tc.size, ResourceLister: l.list})
			t.Cleanup(func() { _ = s.Shutdown(context.Background()) })
			for i := 0; i < tc.registered; i++ {
				must(t, s.AddResource(Resource{URI: fmt.Sprintf("test://reg/%d", i), Name: "reg", Handler: nopResource}))
			}
			return s
		}
		a, b := mk(), mk()
		var keys []string
		cursor := ""
		for i := 0; ; i++ {
			params := ""
			if cursor != "" {
				params = `"cursor":"` + cursor + `"`
			}
			p := decodePage(t, "resources/list", rpc(t, []*Server{a, b}[i%2], "resources/list", params).frame)
			if p.Error != nil {
				t.Fatalf("%+v: %s", tc, p.Error.Message)
			}
			if tc.size > 0 && len(p.Result.Items) > tc.size {
				t.Fatalf("%+v: page of %d", tc, len(p.Result.Items))
			}
			keys = append(keys, keysOf(t, "resources/list", p.Result.Items)...)
			if p.Result.NextCursor == nil {
				break
			}
			cursor = *p.Result.NextCursor
		}
		var want []string
		for i := 0; i < tc.registered; i++ {
			want = append(want, fmt.Sprintf("test://reg/%d", i))
		}
		want = append(want, l.all()...)
		if strings.Join(keys, " ") != strings.Join(want, " ") {
			t.Fatalf("%+v: listed %d, want %d", tc, len(keys), len(want))
		}
		if got := strings.Join(l.calls, " "); got != tc.calls {
			t.Errorf("%+v: lister calls %q, want %q", tc, got, tc.calls)
		}
	}
}

// TestResourceListerErrors: a lister's *codec.Error is the answer as it
// is; one wrapping state.ErrUnavailable is -32603 with HTTP 503; any other
// error is -32603 "Internal error" without its text; a lister cursor it
// refuses is -32602. A lister runs on a worker, never inline.
func TestResourceListerErrors(t *testing.T) {
	l := &lister{n: 3}
	s := New(Config{PageSize: 2, ResourceLister: l.list})
	defer func() { _ = s.Shutdown(context.Background()) }()
	for _, tc := range []struct {
		err    error
		code   int
		status int
		msg    string
	}{
		{codec.NewError(-32000, "Quota exceeded"), -32000, 200, "Quota exceeded"},
		{fmt.Errorf("db: %w", state.ErrUnavailable), -32603, 503, ErrUnavailable.Message},
		{errors.New("pq: connection refused to 10.0.0.7"), -32603, 200, "Internal error"},
	} {
		l.err = tc.err
		r := rpc(t, s, "resources/list", "")
		p := decodePage(t, "resources/list", r.frame)
		if p.Error == nil || p.Error.Code != tc.code || p.Error.Message != tc.msg || r.status != tc.status {
			t.Errorf("%v: %s (status %d)", tc.err, r.frame, r.status)
		}
	}
	l.err = nil
	p := decodePage(t, "resources/list", rpc(t, s, "resources/list", `"cursor":"`+cursorOf(cursorLister, "forged")+`"`).frame)
	if p.Error == nil || p.Error.Code != -32602 || p.Error.Message != "Invalid params: invalid cursor" {
		t.Fatalf("forged lister cursor: %+v", p.Error)
	}
	// A lister's next cursor too long to carry: an internal error.
	long := New(Config{ResourceLister: func(*Call, string, int) ([]mcp.Resource, string, error) {
		return nil, strings.Repeat("x", maxCursorKey+1), nil
	}})
	defer func() { _ = long.Shutdown(context.Background()) }()
	if p := decodePage(t, "resources/list", rpc(t, long, "resources/list", "").frame); p.Error == nil || p.Error.Code != -32603 {
		t.Fatalf("over-long lister cursor: %+v", p)
	}
	// Not inline: the request's Inline reports false, tools/list's true.
	for m, want := range map[string]bool{"resources/list": false, "resources/templates/list": true} {
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + m + `","params":{` + testMeta + `}}`)
		var env codec.Envelope
		must(t, codec.Peek(msg, &env))
		rep := &replyRec{done: make(chan struct{})}
		r := NewScope(s, "").Begin(context.Background(), msg, &env, rep, nil)
		if e := r.Check(); e != nil {
			t.Fatal(e.Message)
		}
		if r.Inline() != want {
			t.Errorf("%s: Inline %v, want %v", m, r.Inline(), want)
		}
		r.Start()
		<-rep.done
	}
}

// TestResourceReader: resources/read of a URI no registered resource or
// template matches goes to Config.ResourceReader; registered resources
// and templates keep theirs; the reader's ErrResourceNotFound is the
// answer for an unknown URI; a reader alone advertises resources.
func TestResourceReader(t *testing.T) {
	s := New(Config{ResourceReader: func(c *Call, uri string) error {
		if !strings.HasPrefix(uri, "test://db/") {
			return ErrResourceNotFound(uri)
		}
		return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: "from the store"}}})
	}})
	defer func() { _ = s.Shutdown(context.Background()) }()
	if d := rpc(t, s, "server/discover", ""); !strings.Contains(string(d.frame), `"resources":{`) {
		t.Fatalf("discover without resources: %s", d.frame)
	}
	must(t, s.AddResource(Resource{URI: "test://db/registered", Name: "r", Handler: nopResource}))
	must(t, s.AddResourceTemplate(ResourceTemplate{URITemplate: "test://db/t/{id}", Name: "t", Handler: nopResource}))
	for uri, want := range map[string]string{
		"test://db/7":          `"text":"from the store"`,
		"test://db/registered": `"text":"r"`,
		"test://db/t/1":        `"text":"r"`,
		"test://other":         `"code":-32602,"message":"Resource not found","data":{"uri":"test://other"}`,
	} {
		r := rpc(t, s, "resources/read", `"uri":"`+uri+`"`)
		if !strings.Contains(string(r.frame), want) {
			t.Errorf("%s: %s", uri, r.frame)
		}
		if strings.Contains(want, "text") && !strings.Contains(string(r.frame), `"ttlMs"`) {
			t.Errorf("%s: no cache hints: %s", uri, r.frame)
		}
	}
}

// TestListLargeProvider: a lister of 10,000 resources is listed whole in
// pages of the default size, each asked for once.
func TestListLargeProvider(t *testing.T) {
	l := &lister{n: 10000}
	s := New(Config{ResourceLister: l.list})
	defer func() { _ = s.Shutdown(context.Background()) }()
	keys, pages := listAll(t, s, "resources/list", "")
	if len(keys) != 10000 || pages != 10 || len(l.calls) != 10 || keys[9999] != l.uri(9999) {
		t.Fatalf("%d keys in %d pages, %d lister calls", len(keys), pages, len(l.calls))
	}
}

// TestListLongKey: a page never ends on a key too long for a cursor; it
// takes the next entry too.
func TestListLongKey(t *testing.T) {
	s := New(Config{PageSize: 1})
	defer func() { _ = s.Shutdown(context.Background()) }()
	long := "test://" + strings.Repeat("x", maxCursorKey)
	for _, u := range []string{"test://a", long, "test://z"} {
		must(t, s.AddResource(Resource{URI: u, Name: "r", Handler: nopResource}))
	}
	keys, pages := listAll(t, s, "resources/list", "")
	if len(keys) != 3 || pages != 2 || keys[1] != long {
		t.Fatalf("%d keys in %d pages", len(keys), pages)
	}
}

// TestAppendResourceMatchesMarshal: the lister's hand encoder writes what
// codec.Marshal writes for an mcp.Resource with every field set, and with
// only the required ones; a field added to mcp.Resource makes this fail
// until appendResource knows it.
func TestAppendResourceMatchesMarshal(t *testing.T) {
	var full mcp.Resource
	v := reflect.ValueOf(&full).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() != reflect.String {
			t.Fatalf("mcp.Resource.%s is not a string: teach appendResource", v.Type().Field(i).Name)
		}
		// (U+2028 left out: codec.AppendString escapes it, sonic does not;
		// both are valid JSON.)
		f.SetString(fmt.Sprintf("v%d \"q\"\n\xff é", i))
	}
	for _, r := range []mcp.Resource{full, {URI: "test://r", Name: "r"}, {}} {
		want, err := codec.Marshal(r)
		must(t, err)
		if got := appendResource(nil, &r); string(got) != string(want) {
			t.Errorf("appendResource\n got %s\nwant %s", got, want)
		}
	}
}

// TestListConcurrentChanges: list requests racing with registrations and
// removals always get a well-formed page of one catalogue or the next
// (run with -race: the catalogs are built while others read the cache).
func TestListConcurrentChanges(t *testing.T) {
	s := catalogServer(t, Config{PageSize: 3}, 20)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// No Fatal off the test's goroutine: check, report, return.
				for _, m := range listMethods {
					cursor := ""
					for {
						params := ""
						if cursor != "" {
							params = `"cursor":"` + cursor + `"`
						}
						f := rpc(t, s, m, params).frame
						var p struct {
							Result *struct {
								NextCursor string `json:"nextCursor"`
							} `json:"result"`
						}
						if err := json.Unmarshal(f, &p); err != nil || (p.Result == nil && !strings.Contains(string(f), "-32601")) {
							t.Errorf("%s: %s", m, f)
							return
						}
						if p.Result == nil || p.Result.NextCursor == "" {
							break
						}
						cursor = p.Result.NextCursor
					}
				}
			}
		}()
	}
	for i := 0; i < 200; i++ {
		name := fmt.Sprintf("tool-%05d", i%20)
		s.RemoveTool(name)
		s.RemoveResource(fmt.Sprintf("test://r/%05d", i%20))
		s.RemoveResourceTemplate(fmt.Sprintf("test://t/%05d/{id}", i%20))
		must(t, s.AddTool(Tool{Name: name, Handler: nopTool}))
		must(t, s.AddResource(Resource{URI: fmt.Sprintf("test://r/%05d", i%20), Name: "r", Handler: nopResource}))
		must(t, s.AddResourceTemplate(ResourceTemplate{URITemplate: fmt.Sprintf("test://t/%05d/{id}", i%20), Name: "t", Handler: nopResource}))
	}
	close(stop)
	wg.Wait()
}
