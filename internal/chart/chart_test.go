package chart

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func render(t *testing.T, p *Page) string {
	t.Helper()
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

const hostile = `</title><script>alert(1)</script><img src=x onerror=alert(2)>"'&`

// Every string a server or a user chose (target URL, tool name, row name,
// an error kind) is text in the page, never markup.
func TestPageEscapesEveryString(t *testing.T) {
	p := &Page{
		Title: hostile,
		Facts: []Fact{{hostile, hostile}},
		Charts: []Chart{
			Line{Title: hostile, XLabel: hostile, YLabel: hostile, Series: []Series{{Name: hostile, Points: []Point{{0, 1}, {1, 2}}}},
				XTicks: []Tick{{0, hostile}, {1, "1"}}},
			Bars{Title: hostile, XLabel: hostile, Bars: []Bar{{Label: hostile, Value: 1, Text: hostile}}, Ref: 1, RefLabel: hostile},
		},
		Tables: []Table{{Title: hostile, Head: []string{hostile}, Rows: [][]string{{hostile}}}},
		Notes:  []string{hostile},
	}
	out := render(t, p)
	for _, bad := range []string{"<script", "<img", "alert(2)>", "alert(1)</script"} {
		if strings.Contains(out, bad) {
			t.Errorf("page contains %q: a provided string became markup", bad)
		}
	}
	if n := strings.Count(out, "&lt;script&gt;alert(1)&lt;/script&gt;"); n < 12 {
		t.Errorf("escaped text found %d times, want every place (≥ 12)", n)
	}
}

// The page loads nothing from anywhere: no src/href, no url(), no
// @import, and a CSP of default-src 'none' so a browser refuses it too.
func TestPageFetchesNothing(t *testing.T) {
	out := render(t, &Page{Title: "t", Charts: []Chart{Line{Series: []Series{{Name: "a", Points: []Point{{0, 0}, {1, 1}}}}}}})
	for _, bad := range []string{"src=", "href=", "url(", "@import", "<script", "<link"} {
		if strings.Contains(out, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if !strings.Contains(out, `content="default-src 'none'; style-src 'unsafe-inline'"`) {
		t.Error("no Content-Security-Policy forbidding fetches")
	}
}

var pointsRE = regexp.MustCompile(`points="([^"]*)"`)

// polylines returns the points of each polyline of the page.
func polylines(t *testing.T, out string) [][][2]float64 {
	t.Helper()
	var all [][][2]float64
	for _, m := range pointsRE.FindAllStringSubmatch(out, -1) {
		var pts [][2]float64
		for _, pair := range strings.Fields(m[1]) {
			xs, ys, ok := strings.Cut(pair, ",")
			x, err1 := strconv.ParseFloat(xs, 64)
			y, err2 := strconv.ParseFloat(ys, 64)
			if !ok || err1 != nil || err2 != nil {
				t.Fatalf("bad point %q", pair)
			}
			pts = append(pts, [2]float64{x, y})
		}
		all = append(all, pts)
	}
	return all
}

// A series is drawn inside the plot area, in order, higher values higher
// on the screen; non-finite points are left out.
func TestLineGeometry(t *testing.T) {
	out := render(t, &Page{Charts: []Chart{Line{Series: []Series{
		{Name: "rps", Points: []Point{{0, 10}, {1, 20}, {2, math.NaN()}, {3, 40}, {math.Inf(1), 5}}},
	}}}})
	if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
		t.Fatal("a non-finite value reached the SVG")
	}
	ps := polylines(t, out)
	if len(ps) != 1 || len(ps[0]) != 3 {
		t.Fatalf("polylines %v, want one with 3 points", ps)
	}
	p := ps[0]
	for i, q := range p {
		if q[0] < padLeft || q[0] > width-padRight || q[1] < padTop || q[1] > lineHeight-padBottom {
			t.Errorf("point %d %v outside the plot area", i, q)
		}
		if i > 0 && (q[0] <= p[i-1][0] || q[1] >= p[i-1][1]) {
			t.Errorf("point %d %v not right of and above %v", i, q, p[i-1])
		}
	}
	if p[0][0] != padLeft || p[2][0] != width-padRight {
		t.Errorf("x range %v..%v, want the plot's full width %d..%d", p[0][0], p[2][0], padLeft, width-padRight)
	}
}

var rectRE = regexp.MustCompile(`<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"`)

// Bars are as long as their values on one scale, and the reference line
// sits where a bar of value Ref would end.
func TestBarsGeometry(t *testing.T) {
	out := render(t, &Page{Charts: []Chart{Bars{Bars: []Bar{{"a", 0.5, ""}, {"b", 1.0, ""}, {"c", math.NaN(), "n/a"}}, Ref: 1, RefLabel: "ceiling"}}})
	ms := rectRE.FindAllStringSubmatch(out, -1)
	if len(ms) != 3 {
		t.Fatalf("%d bars, want 3", len(ms))
	}
	w := func(i int) float64 {
		f, _ := strconv.ParseFloat(ms[i][2], 64)
		return f
	}
	if w(0) <= 0 || math.Abs(w(1)-2*w(0)) > 0.2 || w(2) != 0 {
		t.Errorf("bar widths %v %v %v, want w, 2w, 0", w(0), w(1), w(2))
	}
	ref := regexp.MustCompile(`<line class="ref" x1="([0-9.]+)"`).FindStringSubmatch(out)
	if ref == nil {
		t.Fatal("no reference line")
	}
	x, _ := strconv.ParseFloat(ref[1], 64)
	if math.Abs(x-(barLabelW+w(1))) > 0.2 {
		t.Errorf("reference line at %v, want the end of the 1.0 bar %v", x, barLabelW+w(1))
	}
	if !strings.Contains(out, ">n/a<") || !strings.Contains(out, ">0.50<") {
		t.Error("bar texts missing")
	}
}

func TestNiceTicks(t *testing.T) {
	for i, c := range []struct{ lo, hi float64 }{{0, 1}, {0, 0}, {0, 97}, {0, 123456}, {3, 4.2}, {0, 0.013}, {0, math.NaN()}} {
		ts := niceTicks(c.lo, c.hi, 5)
		last := ts[len(ts)-1]
		if len(ts) < 2 || len(ts) > 12 || (finite(c.hi) && last < c.hi) || last <= ts[0] {
			t.Errorf("%d: niceTicks(%v, %v) = %v", i, c.lo, c.hi, ts)
		}
	}
}

func TestFormatNum(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 0.25: "0.25", 2.5: "2.5", 120: "120", 15000: "15k", 2_500_000: "2.5M", 1e6: "1M"} {
		if got := FormatNum(in); got != want {
			t.Errorf("FormatNum(%v) = %q, want %q", in, got, want)
		}
	}
}

// A long bar label is cut to fit left of its bar; the tooltip keeps it
// whole.
func TestBarsLongLabel(t *testing.T) {
	long := strings.Repeat("x", 80)
	out := render(t, &Page{Charts: []Chart{Bars{Bars: []Bar{{Label: long, Value: 1}}}}})
	if !strings.Contains(out, ">"+strings.Repeat("x", barLabelMax-1)+"…<") || !strings.Contains(out, "<title>"+long+": 1.00</title>") {
		t.Errorf("long label not cut, or its tooltip not whole:\n%s", out)
	}
}
