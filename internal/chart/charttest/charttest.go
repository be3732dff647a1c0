// Package charttest opens a report written by package chart in headless
// Chromium (Debian's package `chromium`) and tells what the browser drew:
// the geometry of every chart's shapes, and the pixels of each series
// colour in a screenshot. Tests only.
//
// Without chromium in PATH the test is skipped, unless RequireEnv is set
// (.ci/run sets it, through `make report-test`).
package charttest

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/chart"
)

// RequireEnv makes a missing chromium a failure instead of a skip.
const RequireEnv = "MCPWIRE_REQUIRE_CHROMIUM"

// Shape is one drawn SVG element as the browser laid it out (user units).
type Shape struct {
	W, H float64
	Len  float64 // polylines: the drawn length
	N    int     // polylines: points
}

// Chart is one <svg class="chart"> of the page.
type Chart struct {
	Title     string
	W, H      float64 // its box on the page, CSS pixels
	Polylines []Shape
	Rects     []Shape
	Texts     int // text elements with a non-zero rendered length
}

// Drawn is what the browser made of a page.
type Drawn struct {
	Charts []Chart
	// Pixels counts, for each colour of chart.Palette, the screenshot's
	// pixels within a small distance of it.
	Pixels map[string]int
}

// Browser returns the chromium binary, skipping tb (or failing it under
// RequireEnv) when there is none.
func Browser(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(RequireEnv) != "" {
		tb.Fatalf("chromium not in PATH and %s is set (Debian: apt-get install chromium)", RequireEnv)
	}
	tb.Skipf("chromium not in PATH: the HTML report is not opened in a browser (set %s to make this a failure)", RequireEnv)
	return ""
}

// measure is appended to a copy of the page: it writes the geometry of
// every chart into a <pre> that --dump-dom prints.
const measure = `<script>
(function () {
  var out = [];
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    var r = svg.getBoundingClientRect();
    var t = svg.querySelector('title');
    var c = {Title: t ? t.textContent : '', W: r.width, H: r.height, Polylines: [], Rects: [], Texts: 0};
    svg.querySelectorAll('polyline').forEach(function (p) {
      var b = p.getBBox();
      c.Polylines.push({W: b.width, H: b.height, Len: p.getTotalLength(), N: p.points.numberOfItems});
    });
    svg.querySelectorAll('rect').forEach(function (p) {
      var b = p.getBBox();
      c.Rects.push({W: b.width, H: b.height, Len: 0, N: 0});
    });
    svg.querySelectorAll('text').forEach(function (p) {
      if (p.getComputedTextLength() > 0) c.Texts++;
    });
    out.push(c);
  });
  var pre = document.createElement('pre');
  pre.id = 'charttest';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
`

// Open loads the page at path in headless Chromium twice: as written, for
// a screenshot (under the page's own Content-Security-Policy), and as a
// copy with a measuring script (its CSP relaxed for that one script), for
// the geometry.
func Open(tb testing.TB, path string) *Drawn {
	tb.Helper()
	bin := Browser(tb)
	page, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	const csp = `content="default-src 'none'; style-src 'unsafe-inline'"`
	if !bytes.Contains(page, []byte(csp)) {
		tb.Fatalf("%s: no Content-Security-Policy %s", path, csp)
	}
	inst := bytes.Replace(page, []byte(csp), []byte(`content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"`), 1)
	inst = bytes.Replace(inst, []byte("</body>"), []byte(measure+"</body>"), 1)
	instPath := filepath.Join(dir, "measured.html")
	if err := os.WriteFile(instPath, inst, 0o644); err != nil {
		tb.Fatal(err)
	}

	dom := run(tb, bin, dir, "--dump-dom", "file://"+instPath)
	_, rest, ok := strings.Cut(string(dom), `<pre id="charttest">`)
	js, _, ok2 := strings.Cut(rest, "</pre>")
	if !ok || !ok2 {
		tb.Fatalf("chromium: the measuring script wrote nothing; DOM:\n%.2000s", dom)
	}
	d := &Drawn{Pixels: map[string]int{}}
	if err := json.Unmarshal([]byte(html.UnescapeString(js)), &d.Charts); err != nil {
		tb.Fatalf("chromium geometry %q: %v", js, err)
	}

	shot := filepath.Join(dir, "shot.png")
	abs, err := filepath.Abs(path)
	if err != nil {
		tb.Fatal(err)
	}
	run(tb, bin, dir, "--screenshot="+shot, "--window-size=900,3000", "file://"+abs)
	f, err := os.Open(shot)
	if err != nil {
		tb.Fatalf("chromium wrote no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		tb.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	for _, hex := range chart.Palette() {
		want := parseHex(hex)
		n := 0
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				if near(r>>8, want[0]) && near(g>>8, want[1]) && near(bl>>8, want[2]) {
					n++
				}
			}
		}
		d.Pixels[hex] = n
	}
	return d
}

func run(tb testing.TB, bin, dir string, args ...string) []byte {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + filepath.Join(dir, "profile")}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("chromium %v: %v\n%.4000s", args, err, stderr.String())
	}
	return out
}

func near(a, b uint32) bool { return a+24 >= b && b+24 >= a }

func parseHex(s string) [3]uint32 {
	var c [3]uint32
	for i := range c {
		v, _ := strconv.ParseUint(s[1+2*i:3+2*i], 16, 8)
		c[i] = uint32(v)
	}
	return c
}
