package engine

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/mcp"
)

// TestTemplateMatch: level-1 templates keep their matcher; templates with
// operators match with the library's semantics.
func TestTemplateMatch(t *testing.T) {
	for i, tc := range []struct {
		tpl, uri string
		want     map[string]string // nil: no match
	}{
		// level 1, as before
		0: {"test://template/{id}/data", "test://template/12/data", map[string]string{"id": "12"}},
		1: {"test://template/{id}/data", "test://template/1/2/data", nil},
		2: {"test://template/{id}/data", "test://template//data", nil},
		3: {"test://template/{id}", "test://template/a%2Fb", map[string]string{"id": "a%2Fb"}}, // not decoded
		4: {"test://{a}-{b}", "test://x-y", map[string]string{"a": "x", "b": "y"}},
		5: {"test://{a}{b}", "test://xy", nil},
		6: {"test://fixed", "test://fixed/x", nil}, // no variables: only the exact URI
		// beyond level 1
		7:  {"file:///{+path}", "file:///a/b/c.txt", map[string]string{"path": "a/b/c.txt"}},
		8:  {"file:///{+path}", "file:///a%20b", map[string]string{"path": "a b"}},
		9:  {"search://items{?q,lang}", "search://items?q=go&lang=en", map[string]string{"q": "go", "lang": "en"}},
		10: {"search://items{?q,lang}", "search://items?q=go", map[string]string{"q": "go"}},
		11: {"search://items{?q,lang}", "search://items", map[string]string{}},
		12: {"search://items{?q,lang}", "search://items?lang=en&q=go", nil}, // template order only
		13: {"doc://{id}{#section}", "doc://7#intro", map[string]string{"id": "7", "section": "intro"}},
		14: {"doc://x{/seg}", "doc://x/a", map[string]string{"seg": "a"}},
		15: {"doc://x{/seg}", "doc://x/a/b", nil},
		16: {"doc://x{/a,b}", "doc://x/1/2", map[string]string{"a": "1", "b": "2"}},
		17: {"file:///{+path}", "other:///a", nil},
		18: {"file:///{+path}", "file:///" + strings.Repeat("a", MaxTemplateURI), map[string]string{"path": strings.Repeat("a", MaxTemplateURI)}}, // regexp groups: no bound
		19: {"doc://x{/seg*}", "doc://x/" + strings.Repeat("a", MaxTemplateURI), nil},                                                             // library's matcher: over MaxTemplateURI
		20: {"doc://x{/seg*}", "doc://x/a/b", map[string]string{"seg": "a,b"}},
	} {
		tp, err := parseTemplate(tc.tpl)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		got, ok := tp.match(tc.uri)
		if tc.want == nil {
			if ok {
				t.Errorf("%d: %s matched %s: %v", i, tc.tpl, tc.uri, got)
			}
			continue
		}
		if !ok || !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("%d: %s ~ %s: got %v %v, want %v", i, tc.tpl, tc.uri, got, ok, tc.want)
		}
	}
	tp, _ := parseTemplate("test://fixed")
	if v, ok := tp.match("test://fixed"); !ok || v != nil {
		t.Errorf("fixed: %v %v", v, ok)
	}
}

// TestTemplateParse: level-1 parsing errors are unchanged; templates the
// library refuses are refused by AddResourceTemplate.
func TestTemplateParse(t *testing.T) {
	for i, tc := range []struct {
		tpl     string
		wantErr string
		lib     bool
	}{
		0:  {"test://{id}", "", false},
		1:  {"test://{a-b}", "", false}, // accepted by the level-1 matcher, as before
		2:  {"test://{", "bad URI template", false},
		3:  {"test://}", "bad URI template", false},
		4:  {"test://{}", "bad URI template variable", false},
		5:  {"test://{+path}", "", true},
		6:  {"test://{?a,b}", "", true},
		7:  {"test://{x:3}", "", true},
		8:  {"test://{list*}", "", true},
		9:  {"test://{+a b}", "bad URI template", true},
		10: {"test://{/a-b}", "bad URI template", true},
	} {
		tp, err := parseTemplate(tc.tpl)
		if tc.wantErr == "" {
			if err != nil || (tp.lib != nil) != tc.lib {
				t.Errorf("%d: %s: err %v, lib %v", i, tc.tpl, err, tp.lib != nil)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%d: %s: err %v, want %q", i, tc.tpl, err, tc.wantErr)
		}
	}
}

func TestTemplateExpand(t *testing.T) {
	for i, tc := range []struct {
		tpl  string
		vars map[string]string
		want string
	}{
		0: {"test://template/{id}/data", map[string]string{"id": "a/b c"}, "test://template/a%2Fb%20c/data"},
		1: {"file:///{+path}", map[string]string{"path": "a/b c"}, "file:///a/b%20c"},
		2: {"search://items{?q,lang}", map[string]string{"q": "go"}, "search://items?q=go"},
		3: {"doc://{id}{#section}", map[string]string{"id": "7", "section": "x/y"}, "doc://7#x/y"},
	} {
		got, err := ResourceTemplate{URITemplate: tc.tpl}.Expand(tc.vars)
		if err != nil || got != tc.want {
			t.Errorf("%d: got %q %v, want %q", i, got, err, tc.want)
		}
		// What Expand builds, the template matches again.
		tp, err := parseTemplate(tc.tpl)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := tp.match(got); !ok {
			t.Errorf("%d: %s does not match its own expansion %s", i, tc.tpl, got)
		}
	}
}

// TestReadThroughLevel3Template: resources/read reaches the handler of a
// {+path} template with the decoded variable.
func TestReadThroughLevel3Template(t *testing.T) {
	s := New(Config{})
	defer func() { _ = s.Shutdown(context.Background()) }()
	if err := s.AddResourceTemplate(ResourceTemplate{URITemplate: "file:///{+path}", Name: "files",
		Handler: func(c *Call, uri string, vars map[string]string) error {
			return c.Return(mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: uri, Text: "path=" + vars["path"]}}})
		}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResourceTemplate(ResourceTemplate{URITemplate: "file:///{+a b}", Name: "bad",
		Handler: func(*Call, string, map[string]string) error { return nil }}); err == nil {
		t.Fatal("a malformed template was accepted")
	}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///docs/a%20b.txt",` + testMeta + `}}`)
	r, rep := beginChecked(t, s, msg)
	r.Run()
	<-rep.done
	if !strings.Contains(string(rep.reply), `"text":"path=docs/a b.txt"`) {
		t.Fatalf("reply %s", rep.reply)
	}
}
