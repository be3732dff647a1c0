package engine

import (
	"strings"
	"testing"

	"github.com/yosida95/uritemplate/v3"
)

// BenchmarkTemplateMatch: a level-1 template on its own matcher (what
// resources/read does, unchanged by level-3 support), the same template
// through the library's matcher (what it would cost to send everything
// there), a {+path} template (values from the regexp's groups; and through
// the library's matcher), single- and multi-variable query templates, a
// URI no template matches, and the longest URI matched.
func BenchmarkTemplateMatch(b *testing.B) {
	const l1, l1URI = "test://template/{id}/data", "test://template/12345/data"
	b.Run("level1", func(b *testing.B) {
		tp, err := parseTemplate(l1)
		if err != nil || tp.lib != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := tp.match(l1URI); !ok {
				b.Fatal("no match")
			}
		}
	})
	b.Run("level1-library", func(b *testing.B) {
		lt, err := parseLibTemplate(l1)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := lt.match(l1URI); !ok {
				b.Fatal("no match")
			}
		}
	})
	b.Run("level1-library-Match", func(b *testing.B) {
		t := uritemplate.MustNew(l1)
		b.ReportAllocs()
		for b.Loop() {
			if t.Match(l1URI) == nil {
				b.Fatal("no match")
			}
		}
	})
	b.Run("reserved", func(b *testing.B) {
		tp, err := parseTemplate("file:///{+path}")
		if err != nil || tp.lib == nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := tp.match("file:///docs/2026/report.txt"); !ok {
				b.Fatal("no match")
			}
		}
	})
	b.Run("reserved-library", func(b *testing.B) {
		tp, _ := parseTemplate("file:///{+path}")
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := tp.lib.libMatch("file:///docs/2026/report.txt"); !ok {
				b.Fatal("no match")
			}
		}
	})
	b.Run("query", func(b *testing.B) {
		tp, _ := parseTemplate("search://items{?q}{&lang}")
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := tp.match("search://items?q=go&lang=en"); !ok {
				b.Fatal("no match")
			}
		}
	})
	b.Run("query-list", func(b *testing.B) {
		tp, _ := parseTemplate("search://items{?q,lang}") // two variables: the library's matcher
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := tp.match("search://items?q=go&lang=en"); !ok {
				b.Fatal("no match")
			}
		}
	})
	b.Run("reserved-miss", func(b *testing.B) {
		tp, _ := parseTemplate("file:///{+path}")
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := tp.match("test://template/12345/data"); ok {
				b.Fatal("match")
			}
		}
	})
	b.Run("reserved-long", func(b *testing.B) {
		tp, _ := parseTemplate("file:///{+path}")
		uri := "file:///" + strings.Repeat("a/", MaxTemplateURI/2)
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := tp.match(uri); !ok {
				b.Fatal("no match")
			}
		}
	})
	b.Run("explode-longest-library", func(b *testing.B) {
		tp, _ := parseTemplate("doc://x{/seg*}")
		uri := "doc://x" + strings.Repeat("/a", (MaxTemplateURI-7)/2)
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := tp.match(uri); !ok {
				b.Fatal("no match")
			}
		}
	})
}
