package load

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/internal/chart"
	"github.com/mcpwire/mcpwire/internal/chart/charttest"
)

// TestChromiumDrawsLoadReport writes the HTML report of a real run and
// opens it in headless Chromium: the three charts (throughput over time,
// p50/p99 over time, the percentile curve) are drawn with their points and
// labels, in colour, under the page's no-fetch policy (skipped without
// chromium unless MCPWIRE_REQUIRE_CHROMIUM is set; `make report-test`).
func TestChromiumDrawsLoadReport(t *testing.T) {
	charttest.Browser(t)
	s := startLineServer(t, "tcp", "127.0.0.1:0")
	res := runLoad(t, Config{Target: "tcp://" + s.ln.Addr().String(), Conns: 2, Inflight: 4,
		Duration: 2500 * time.Millisecond, Warmup: 100 * time.Millisecond, Timeline: true})
	path := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d := charttest.Open(t, path)
	if len(d.Charts) != 3 {
		t.Fatalf("%d charts drawn, want 3: %+v", len(d.Charts), d.Charts)
	}
	want := []struct {
		series, points int
	}{{1, 2}, {2, 2}, {1, 10}} // responses/s; p50, p99; the percentile curve
	for i, c := range d.Charts {
		if c.W < 300 || c.H < 100 || c.Texts < 8 || len(c.Polylines) != want[i].series {
			t.Errorf("chart %d %q: %+v", i, c.Title, c)
			continue
		}
		for k, p := range c.Polylines {
			if p.N < want[i].points || p.Len < 50 || p.W < 50 {
				t.Errorf("chart %d %q, series %d drawn as %+v", i, c.Title, k, p)
			}
		}
	}
	pal := chart.Palette()
	if d.Pixels[pal[0]] < 600 || d.Pixels[pal[1]] < 150 {
		t.Errorf("screenshot pixels of the series colours %v", d.Pixels)
	}
}
