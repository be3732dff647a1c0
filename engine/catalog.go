package engine

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
)

// The list methods and their pages (cursor.go describes the cursors).
//
// Each list's registered entries are kept as a catalog: sorted by key,
// each entry encoded once, all of them in one buffer. A catalog is built
// on the first list request after a registry change, not by the change
// itself, so registering 10,000 resources one by one encodes them once
// instead of once per registration. The first page (no cursor) is then
// one cached result: serving it copies it and allocates nothing. A later
// page copies one run of the buffer (the entries between two positions)
// into the response, plus its cursor: no allocation either.
//
// With Config.ToolFilter, tools/list pages are built per request from the
// encoded entries the caller may see, and carry cacheScope "private".
// With Config.ResourceLister, resources/list lists the registered
// resources first, then the lister's pages; a page that reaches the
// lister is built per request.

// listKind names the catalogue a list method pages through.
type listKind uint8

const (
	listNone listKind = iota // not a list method
	listTools
	listPrompts
	listResources
	listTemplates
	numLists
)

// listHead is the start of each list's result, up to its array's '['.
var listHead = [numLists]string{
	listTools:     `{"resultType":"complete","tools":[`,
	listPrompts:   `{"resultType":"complete","prompts":[`,
	listResources: `{"resultType":"complete","resources":[`,
	listTemplates: `{"resultType":"complete","resourceTemplates":[`,
}

// listCursor is the cursor kind of each list's registered entries.
var listCursor = [numLists]byte{
	listTools:     cursorTools,
	listPrompts:   cursorPrompts,
	listResources: cursorResources,
	listTemplates: cursorTemplates,
}

// DefaultPageSize is the number of entries on one page of a list when
// Config.PageSize is 0: large enough that a small server answers every
// list in one page.
const DefaultPageSize = 1000

// catalog is one list's registered entries in key order (name, URI or URI
// template, compared as bytes). Never modified once built.
type catalog struct {
	keys []string
	enc  []byte // the entries' JSON, separated by commas
	// off[i] is where entry i starts in enc; off[len(keys)] is len(enc)+1,
	// as if a comma followed the last entry.
	off []int
	// tools/list with a ToolFilter: the tool of each entry.
	tools []*Tool
	// first is the first page's whole result; nil when it is built per
	// request (ToolFilter; a ResourceLister reached on the first page).
	first []byte
}

// run returns entries i to j-1, separated by commas.
func (k *catalog) run(i, j int) []byte {
	if i >= j {
		return nil
	}
	return k.enc[k.off[i] : k.off[j]-1]
}

// after returns the index of the first entry whose key sorts after key.
func (k *catalog) after(key []byte) int {
	lo, hi := 0, len(k.keys)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if k.keys[m] <= string(key) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// end returns the end of the page that starts at entry start: size entries
// on, or the catalogue's end. A page never ends on a key too long for a
// cursor (over maxCursorKey): it takes the next entry too.
func (k *catalog) end(start, size int) int {
	n := len(k.keys)
	if size >= n-start {
		return n
	}
	end := start + size
	for end < n && len(k.keys[end-1]) > maxCursorKey {
		end++
	}
	return end
}

// pageSize is the entries per page: Config.PageSize, or all of them.
func (s *Server) pageSize() int {
	if s.opt.PageSize < 0 {
		return math.MaxInt
	}
	return s.opt.PageSize
}

// listerLimit is the most entries the ResourceLister is asked for when
// room entries are left on the page: with paging off it still pages, by
// DefaultPageSize, so that a store is never read whole into one response.
func (s *Server) listerLimit(room int) int {
	if s.opt.PageSize < 0 {
		return DefaultPageSize
	}
	return room
}

// catalog returns list k's catalog, building it on the first request
// after a registry change.
func (s *Server) catalog(k listKind) *catalog {
	if cat := s.regs().lists[k].Load(); cat != nil {
		return cat
	}
	s.regMu.Lock()
	defer s.regMu.Unlock()
	// Under regMu the registries are those the current snapshot was
	// built from (every change clears it before releasing regMu).
	rc := s.regsLocked()
	cat := rc.lists[k].Load()
	if cat == nil {
		cat = s.buildCatalog(k, rc)
		rc.lists[k].Store(cat)
	}
	return cat
}

// buildCatalog encodes list k's registered entries. Called with regMu held.
func (s *Server) buildCatalog(k listKind, rc *resultCache) *catalog {
	cat := &catalog{}
	var err error
	add := func(key string, entry any) {
		cat.keys = append(cat.keys, key)
		cat.off = append(cat.off, len(cat.enc))
		cat.enc, err = codec.AppendMarshal(cat.enc, entry)
		if err != nil {
			panic("engine: cannot encode the " + listField(k) + " entry " + key + ": " + err.Error())
		}
		cat.enc = append(cat.enc, ',')
	}
	switch k {
	case listTools:
		tools := slices.SortedFunc(maps.Values(s.tools), func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
		for _, t := range tools {
			add(t.Name, t.listEntry())
		}
		if s.opt.ToolFilter != nil {
			cat.tools = tools
		}
	case listPrompts:
		prompts := slices.SortedFunc(maps.Values(s.prompts), func(a, b *Prompt) int { return strings.Compare(a.Name, b.Name) })
		for _, p := range prompts {
			add(p.Name, p.listEntry())
		}
	case listResources:
		res := slices.SortedFunc(maps.Values(s.resources), func(a, b *Resource) int { return strings.Compare(a.URI, b.URI) })
		for _, r := range res {
			add(r.URI, r.listEntry())
		}
	case listTemplates:
		tpls := slices.SortedFunc(slices.Values(s.templates), func(a, b *templateEntry) int {
			return strings.Compare(a.def.URITemplate, b.def.URITemplate)
		})
		for _, t := range tpls {
			add(t.def.URITemplate, t.def.listEntry())
		}
	}
	cat.off = append(cat.off, len(cat.enc))
	if len(cat.enc) > 0 {
		cat.enc = cat.enc[:len(cat.enc)-1] // the last comma
	}
	if k == listTools && s.opt.ToolFilter != nil {
		return cat // per caller: no shared first page
	}
	end := cat.end(0, s.pageSize())
	lister := k == listResources && s.opt.ResourceLister != nil
	if lister && end == len(cat.keys) && end < s.pageSize() {
		return cat // the first page asks the lister
	}
	b := append([]byte(listHead[k]), cat.run(0, end)...)
	b = append(b, ']')
	switch {
	case end < len(cat.keys):
		b, _ = appendNextCursor(b, nil, listCursor[k], cat.keys[end-1])
	case lister:
		b, _ = appendNextCursor(b, nil, cursorLister, "")
	}
	cat.first = s.appendPageEnd(b, rc.hints)
	return cat
}

// listField is the result member of list k, for messages.
func listField(k listKind) string {
	h := listHead[k]
	return h[len(`{"resultType":"complete","`) : len(h)-3]
}

// appendNextCursor appends `,"nextCursor":"…"`.
func appendNextCursor(b, tmp []byte, kind byte, key string) ([]byte, []byte) {
	b = append(b, `,"nextCursor":"`...)
	b, tmp = appendCursor(b, tmp, kind, key)
	return append(b, '"'), tmp
}

// appendPageEnd closes a page: the cache hints, serverInfo, '}'.
func (s *Server) appendPageEnd(b, hints []byte) []byte {
	b = append(b, hints...)
	b = append(b, `,"_meta":`...)
	b = append(b, s.serverMeta...)
	return append(b, '}')
}

// listPage serves tools/list, prompts/list, resources/list and
// resources/templates/list: the page after c.cursor (read by
// CheckTarget), or the first.
func listPage(c *Call) error {
	s := c.srv
	k := c.method.list
	cat := s.catalog(k)
	if len(c.cursor) == 0 && cat.first != nil {
		c.setRawResult(cat.first)
		return nil
	}
	hints := s.regs().hints
	c.startResult()
	c.rkind = kindComplete
	c.out = append(c.out, listHead[k]...)
	switch {
	case k == listTools && s.opt.ToolFilter != nil:
		c.filteredPage(cat)
		hints = s.privateHints
	case len(c.cursor) > 0 && c.cursor[0] == cursorLister:
		if err := c.listerPage(string(c.cursor[1:]), s.listerLimit(s.pageSize()), 0); err != nil {
			return err
		}
	default:
		start := 0
		if len(c.cursor) > 0 {
			start = cat.after(c.cursor[1:])
		}
		size := s.pageSize()
		end := cat.end(start, size)
		c.out = append(c.out, cat.run(start, end)...)
		switch {
		case end < len(cat.keys):
			c.out = append(c.out, ']')
			c.out, c.scratch = appendNextCursor(c.out, c.scratch, listCursor[k], cat.keys[end-1])
		case k == listResources && s.opt.ResourceLister != nil:
			if n := end - start; n < size {
				if err := c.listerPage("", s.listerLimit(size-n), n); err != nil {
					return err
				}
			} else {
				c.out = append(c.out, ']')
				c.out, c.scratch = appendNextCursor(c.out, c.scratch, cursorLister, "")
			}
		default:
			c.out = append(c.out, ']')
		}
	}
	c.out = s.appendPageEnd(c.out, hints)
	return nil
}

// filteredPage appends the caller's page of tools/list with a ToolFilter:
// the next PageSize tools the filter lets the caller see, after the
// cursor's name, and a cursor when the caller may see more.
func (c *Call) filteredPage(cat *catalog) {
	f := c.srv.opt.ToolFilter
	size := c.srv.pageSize()
	i := 0
	if len(c.cursor) > 0 {
		i = cat.after(c.cursor[1:])
	}
	n, last := 0, -1
	for ; i < len(cat.tools); i++ {
		if n >= size && len(cat.keys[last]) <= maxCursorKey {
			break
		}
		if !f(c, cat.tools[i]) {
			continue
		}
		if n > 0 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, cat.run(i, i+1)...)
		n++
		last = i
	}
	// Only a tool the caller may see makes a next page worth asking for.
	for i < len(cat.tools) && !f(c, cat.tools[i]) {
		i++
	}
	c.out = append(c.out, ']')
	if i < len(cat.tools) {
		c.out, c.scratch = appendNextCursor(c.out, c.scratch, cursorTools, cat.keys[last])
	}
}

// errListerCursor answers a ResourceLister's next cursor that no cursor
// can carry.
var errListerCursor = errors.New("engine: ResourceLister returned a next cursor over 48 KiB")

// listerPage appends up to limit resources of Config.ResourceLister,
// from its cursor, to a resources/list page that holds n entries so
// far, then closes the array with the lister's next cursor, if any. Each
// resource is encoded into the response as it is read from the lister's
// slice; the engine keeps none of them.
func (c *Call) listerPage(cursor string, limit, n int) error {
	items, next, err := c.srv.opt.ResourceLister(c, cursor, limit)
	if err != nil {
		return err
	}
	if len(next) > maxCursorKey {
		return errListerCursor
	}
	for i := range items {
		if n > 0 {
			c.out = append(c.out, ',')
		}
		c.out = appendResource(c.out, &items[i])
		n++
	}
	c.out = append(c.out, ']')
	if next != "" {
		c.out, c.scratch = appendNextCursor(c.out, c.scratch, cursorLister, next)
	}
	return nil
}

// appendResource appends r as a resources/list entry. It writes what
// codec.Marshal writes, without its allocation per value (a lister's page
// costs no allocation of the engine's per resource);
// TestAppendResourceMatchesMarshal fails when mcp.Resource gains a field
// this does not know.
func appendResource(b []byte, r *mcp.Resource) []byte {
	b = append(b, `{"uri":`...)
	b = codec.AppendString(b, r.URI)
	b = append(b, `,"name":`...)
	b = codec.AppendString(b, r.Name)
	if r.Title != "" {
		b = append(b, `,"title":`...)
		b = codec.AppendString(b, r.Title)
	}
	if r.Description != "" {
		b = append(b, `,"description":`...)
		b = codec.AppendString(b, r.Description)
	}
	if r.MimeType != "" {
		b = append(b, `,"mimeType":`...)
		b = codec.AppendString(b, r.MimeType)
	}
	return append(b, '}')
}

// ResourceLister lists resources that are not registered one by one (with
// Config.ResourceLister): those of a database, a file tree, an API. It
// returns the page that starts at cursor ("" for its first page), at most
// limit resources, and the cursor of the page after it, "" after the last
// page. The cursor is the lister's own: the engine wraps it into the
// client's opaque cursor and hands it back unchanged, so keyset paging by
// the store's own key (the last URI returned) works across replicas and
// restarts. A cursor handed back may also be forged by a client: treat
// it as untrusted input (a query parameter, never query text), and
// refuse one it cannot read with ErrInvalidCursor.
//
// A page is encoded into the response as soon as the lister returns it
// and not kept; the engine reads the store one page per request, never
// whole. The lister runs on a worker goroutine, and c is its context:
// cancelled when the client cancels or goes away. Like a handler, it must
// not use c after it has returned.
//
// An error fails the request: a *codec.Error is sent as it is (-32602
// ErrInvalidCursor, for example), one wrapping state.ErrUnavailable is
// -32603 with HTTP 503, any other -32603 "Internal error" (and logged).
type ResourceLister func(c *Call, cursor string, limit int) (page []mcp.Resource, next string, err error)

// ResourceReader serves resources/read for a URI that no registered
// resource or template matches (with Config.ResourceReader): usually the
// resources a ResourceLister lists. It answers as a ResourceHandler does,
// with Call.Return(mcp.ReadResourceResult{…}), or returns
// ErrResourceNotFound(uri) for a URI it does not know.
type ResourceReader func(c *Call, uri string) error

// ErrInvalidCursor is the -32602 error for a list cursor that cannot be
// read: a ResourceLister returns it for a cursor of its own that it
// refuses (the engine refuses the others before the lister runs).
var ErrInvalidCursor = errBadCursor
