package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
)

// sizeReply counts the bytes of the replies it is given, keeping none.
type sizeReply struct{ n, bytes int }

func (*sizeReply) Notify(*Request, []byte) error { return nil }
func (r *sizeReply) Reply(_ *Request, f []byte, _ int) error {
	r.n++
	r.bytes += len(f)
	return nil
}
func (*sizeReply) Done(*Request) {}

// pageMessages returns the requests that page through method on s, one
// per page, the first without a cursor.
func pageMessages(b *testing.B, s *Server, method string) [][]byte {
	var msgs [][]byte
	cursor := ""
	for {
		params := testMeta
		if cursor != "" {
			params = `"cursor":"` + cursor + `",` + testMeta
		}
		msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `}}`)
		msgs = append(msgs, msg)
		p := decodePage(b, method, rpc(b, s, method, params[:max(0, len(params)-len(testMeta)-1)]).frame)
		if p.Result.NextCursor == nil {
			return msgs
		}
		cursor = *p.Result.NextCursor
	}
}

// BenchmarkListPages lists a catalogue of 10,000 tools or resources page
// by page: each op is one page request through Begin, Check and Run (the
// first page, served from the cache, and every later one after its
// cursor, in turn). "all" is PageSize -1: the whole catalogue in one
// result, the cost paging spares a client. "lister" is resources/list
// through a ResourceLister of 10,000 resources, whose own page building
// (a slice of mcp.Resource and their URIs, two allocations per resource)
// is counted too; "preloaded" is the same lister serving rows it made
// beforehand, so that what is counted is the engine's alone.
// B/response is the size of the answer.
func BenchmarkListPages(b *testing.B) {
	for _, bc := range []struct {
		name, method string
		size         int
		lister       bool
	}{
		{"tools/1000", "tools/list", 0, false},
		{"tools/100", "tools/list", 100, false},
		{"tools/all", "tools/list", -1, false},
		{"resources/1000", "resources/list", 0, false},
		{"resources/100", "resources/list", 100, false},
		{"resources/all", "resources/list", -1, false},
		{"lister/1000", "resources/list", 0, true},
		{"lister/100", "resources/list", 100, true},
		{"preloaded/1000", "resources/list", 0, true},
		{"preloaded/100", "resources/list", 100, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			opt := Config{PageSize: bc.size}
			if bc.lister {
				l := &lister{n: 10000}
				if strings.HasPrefix(bc.name, "preloaded") {
					l.preload()
				}
				opt.ResourceLister = l.list
			}
			s := New(opt)
			defer func() { _ = s.Shutdown(context.Background()) }()
			for i := 0; i < 10000 && !bc.lister; i++ {
				if bc.method == "tools/list" {
					must(b, s.AddTool(Tool{Name: fmt.Sprintf("tool-%05d", i), Description: "A tool of the benchmark's catalogue", Handler: nopTool, SkipValidation: true}))
				} else {
					must(b, s.AddResource(Resource{URI: fmt.Sprintf("test://catalogue/%05d", i), Name: "resource", MimeType: "text/plain", Handler: nopResource}))
				}
			}
			msgs := pageMessages(b, s, bc.method)
			sc := NewScope(s, "stdio")
			rep := &sizeReply{}
			var env codec.Envelope
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				msg := msgs[i%len(msgs)]
				if err := codec.Peek(msg, &env); err != nil {
					b.Fatal(err)
				}
				r := sc.BeginBorrowed(context.Background(), msg, &env, rep, nil)
				if e := r.Check(); e != nil {
					b.Fatal(e.Message)
				}
				r.Run()
			}
			b.ReportMetric(float64(rep.bytes)/float64(rep.n), "B/response")
			b.ReportMetric(float64(len(msgs)), "pages")
		})
	}
}

// BenchmarkRegisterCatalogue registers 10,000 resources one by one, then
// lists them once (the first page): what a server with a large catalogue
// pays at start-up. Self-contained, so that it runs on trees before the
// catalogs too.
func BenchmarkRegisterCatalogue(b *testing.B) {
	read := func(c *Call, uri string, _ map[string]string) error { return nil }
	list := []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	for i := 0; i < b.N; i++ {
		s := New(Config{})
		for j := 0; j < 10000; j++ {
			if err := s.AddResource(Resource{URI: fmt.Sprintf("test://catalogue/%05d", j), Name: "resource", Handler: read}); err != nil {
				b.Fatal(err)
			}
		}
		var env codec.Envelope
		if err := codec.Peek(list, &env); err != nil {
			b.Fatal(err)
		}
		r := NewScope(s, "").BeginBorrowed(context.Background(), list, &env, &sizeReply{}, nil)
		if e := r.Check(); e != nil {
			b.Fatal(e.Message)
		}
		r.Run()
		_ = s.Shutdown(context.Background())
	}
}
