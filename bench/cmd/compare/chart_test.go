package main

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/internal/chart"
	"github.com/mcpwire/mcpwire/internal/chart/charttest"
)

var chartHead = []string{"row", "shape", "generator", "fixture", "req/s", "vs ceiling", "mean µs"}

var chartRows = [][]string{
	{"raw fasthttp", "64×1", "wrk", "token", "58162", "ceiling", "1100"},
	{"mcpwire", "64×1", "wrk", "token", "55582", "0.96", "1150"},
	{"mcpwire <script>alert(1)</script>", "64×1", "mcpwire load", "no token", "40000 (1/3 failed)", "0.69", "1500"},
	{"go-sdk", "64×1", "wrk", "token", "FAILED", "—", "—"},
}

// The request table becomes a ratio chart (ceilings and unmeasured rows
// left out), a throughput chart, and the table; row names are text.
func TestTableChart(t *testing.T) {
	dir := t.TempDir()
	path, err := requestChart.write(dir, chartHead, chartRows, []string{"FAILED: go-sdk, round 1: exit 1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	if strings.Contains(out, "<script") || !strings.Contains(out, "mcpwire &lt;script&gt;") {
		t.Error("a row name became markup")
	}
	ratio, rate, _ := strings.Cut(out, "Throughput (median over rounds)")
	if n := strings.Count(ratio, `<rect x=`); n != 2 {
		t.Errorf("%d ratio bars, want 2 (mcpwire rows; not the ceiling, not FAILED)", n)
	}
	if n := strings.Count(rate, `<rect x=`); n != 3 {
		t.Errorf("%d throughput bars, want 3", n)
	}
	for _, want := range []string{">mcpwire · 64×1 · wrk<", "no token", ">0.96<", ">58.2k<", "FAILED: go-sdk", "<table>"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the page", want)
		}
	}
}

func TestCellNumber(t *testing.T) {
	for i, c := range []struct {
		cell string
		want float64
		ok   bool
	}{{"0.96", 0.96, true}, {"55582 (1/3 failed)", 55582, true}, {"—", 0, false}, {"ceiling", 0, false}, {"FAILED", 0, false}, {"", 0, false}, {"NaN", 0, false}} {
		v, ok := cellNumber([]string{c.cell}, 0)
		if ok != c.ok || ok && v != c.want {
			t.Errorf("%d: cellNumber(%q) = %v %v", i, c.cell, v, ok)
		}
	}
}

// TestChromiumDrawsCompareChart opens the compare page in headless
// Chromium: both bar charts drawn, each measured row a visible bar, the
// ceiling line placed (skipped without chromium unless
// MCPWIRE_REQUIRE_CHROMIUM is set; `make report-test`).
func TestChromiumDrawsCompareChart(t *testing.T) {
	charttest.Browser(t)
	path, err := requestChart.write(t.TempDir(), chartHead, chartRows, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := charttest.Open(t, path)
	if len(d.Charts) != 2 {
		t.Fatalf("%d charts, want 2: %+v", len(d.Charts), d.Charts)
	}
	for i, want := range []int{2, 3} {
		c := d.Charts[i]
		drawn := 0
		for _, r := range c.Rects {
			if r.W > 20 && r.H > 5 {
				drawn++
			}
		}
		if drawn != want || c.Texts < 2*want+3 {
			t.Errorf("chart %d %q: %d bars drawn (want %d), %d texts: %+v", i, c.Title, drawn, want, c.Texts, c)
		}
	}
	if px := d.Pixels[chart.Palette()[0]]; px < 2000 {
		t.Errorf("%d pixels of the bar colour", px)
	}
}
