package chart_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpwire/mcpwire/internal/chart"
	"github.com/mcpwire/mcpwire/internal/chart/charttest"
)

// TestChromiumDrawsCharts opens a page with a two-series line chart and a
// bar chart in headless Chromium: every series is drawn with its points,
// every bar with its length, every label as text, in the page's colours
// (skipped without chromium unless MCPWIRE_REQUIRE_CHROMIUM is set).
func TestChromiumDrawsCharts(t *testing.T) {
	charttest.Browser(t)
	p := &chart.Page{Title: "charts", Charts: []chart.Chart{
		chart.Line{Title: "line", XLabel: "x", YLabel: "y", Series: []chart.Series{
			{Name: "up", Points: []chart.Point{{X: 0, Y: 1}, {X: 1, Y: 3}, {X: 2, Y: 2}, {X: 3, Y: 5}}},
			{Name: "flat", Points: []chart.Point{{X: 0, Y: 2}, {X: 3, Y: 2}}},
		}},
		chart.Bars{Title: "bars", Bars: []chart.Bar{{Label: "a", Value: 0.5}, {Label: "b", Value: 1.2}}, Ref: 1, RefLabel: "ceiling"},
	}}
	path := filepath.Join(t.TempDir(), "p.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d := charttest.Open(t, path)
	if len(d.Charts) != 2 {
		t.Fatalf("%d charts drawn, want 2: %+v", len(d.Charts), d.Charts)
	}
	line, bars := d.Charts[0], d.Charts[1]
	if line.W < 300 || line.H < 100 || len(line.Polylines) != 2 {
		t.Fatalf("line chart %+v", line)
	}
	for i, pl := range line.Polylines {
		if pl.Len < 100 || pl.W < 100 || pl.N < 2 {
			t.Errorf("series %d drawn as %+v", i, pl)
		}
	}
	var long int
	for _, r := range bars.Rects {
		if r.W > 50 && r.H > 5 {
			long++
		}
	}
	if long != 2 || bars.Texts < 8 || line.Texts < 8 {
		t.Errorf("bars %+v (want 2 drawn), texts %d and %d", bars.Rects, bars.Texts, line.Texts)
	}
	pal := chart.Palette()
	if d.Pixels[pal[0]] < 400 || d.Pixels[pal[1]] < 200 {
		t.Errorf("screenshot pixels of the series colours %v, want ≥ 400 and ≥ 200", d.Pixels)
	}
}
