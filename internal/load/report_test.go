package load

import (
	"bytes"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// checkHGRM parses an .hgrm and checks what HdrHistogram's format
// promises: percentiles, values and cumulative counts never decrease; the
// last line is percentile 1 without the 1/(1-Percentile) column and counts
// everything; each other line's inverse matches its percentile; the
// footer's total equals want.
func checkHGRM(t *testing.T, text []byte, want int64) *hgrm {
	t.Helper()
	h, err := parseHGRM(iotest.OneByteReader(bytes.NewReader(text)))
	if err != nil {
		t.Fatalf("parseHGRM: %v\n%s", err, text)
	}
	if len(h.rows) < 2 {
		t.Fatalf("%d rows", len(h.rows))
	}
	for i, r := range h.rows {
		last := i == len(h.rows)-1
		if i > 0 {
			p := h.rows[i-1]
			if r.percentile < p.percentile || r.value < p.value || r.count < p.count {
				t.Errorf("row %d %+v decreases from row %d %+v", i, r, i-1, p)
			}
		}
		if r.percentile < 0 || r.percentile > 1 {
			t.Errorf("row %d: percentile %v outside [0,1]", i, r.percentile)
		}
		switch {
		case last && (r.percentile != 1 || !math.IsNaN(r.inverse)):
			t.Errorf("last row %+v: want percentile 1 and no inverse column", r)
		case !last && math.Abs(r.inverse-1/(1-r.percentile)) > 0.006*r.inverse:
			t.Errorf("row %d: 1/(1-%v) printed as %v", i, r.percentile, r.inverse)
		case !last && r.percentile == 1:
			t.Errorf("row %d of %d has percentile 1", i, len(h.rows))
		}
	}
	if got := h.rows[len(h.rows)-1].count; got != want || h.total != want {
		t.Errorf("last row counts %d, footer total %d; want %d", got, h.total, want)
	}
	if h.max < h.rows[len(h.rows)-1].value-0.0005 || h.mean <= 0 || h.mean > h.max {
		t.Errorf("footer mean %v max %v against last value %v", h.mean, h.max, h.rows[len(h.rows)-1].value)
	}
	return h
}

// The writer follows HdrHistogram's reference layout, figure for figure
// against the histogram it was written from (values in ms).
func TestWriteHGRMFormat(t *testing.T) {
	h := newHist()
	for v := int64(1); v <= 10_000; v++ {
		_ = h.RecordValue(v * 3) // 3 µs .. 30 ms
	}
	var b bytes.Buffer
	if err := writeHGRM(&b, h, HGRMScale); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if !strings.HasPrefix(text, "       Value     Percentile TotalCount 1/(1-Percentile)\n\n") {
		t.Errorf("header %q: want the reference's %%12s %%14s %%10s %%14s line and a blank line", strings.SplitN(text, "\n", 2)[0])
	}
	if !regexp.MustCompile(`(?m)^ {7}0\.003 0\.000000000000 {10}1 {11}1\.00$`).MatchString(text) {
		t.Errorf("first row not in the reference's %%12.3f %%2.12f %%10d %%14.2f form:\n%.200s", text)
	}
	got := checkHGRM(t, b.Bytes(), h.TotalCount())
	if math.Abs(got.mean-h.Mean()/HGRMScale) > 0.001 || got.max != float64(h.Max())/HGRMScale {
		t.Errorf("footer mean %v max %v, want %v %v", got.mean, got.max, h.Mean()/HGRMScale, float64(h.Max())/HGRMScale)
	}
	for _, r := range got.rows {
		if r.percentile == 0.5 && math.Abs(r.value-15.0) > 0.02 {
			t.Errorf("p50 row value %v ms, want 15 ms", r.value)
		}
	}
	// Buckets and SubBuckets as the library itself reports them.
	var lib bytes.Buffer
	if _, err := h.PercentilesPrint(&lib, 5, 1000); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`#\[Buckets = +(\d+), SubBuckets += +(\d+)\]`).FindStringSubmatch(lib.String())
	if m == nil {
		t.Fatalf("library footer: %s", lib.String())
	}
	if strconv.FormatInt(got.buckets, 10) != m[1] || strconv.FormatInt(got.subBuckets, 10) != m[2] {
		t.Errorf("Buckets %d SubBuckets %d, the library says %s %s", got.buckets, got.subBuckets, m[1], m[2])
	}
}

// An empty run still writes a parseable file: header and footer.
func TestWriteHGRMEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := (&Result{}).WriteHGRM(&b); err != nil {
		t.Fatal(err)
	}
	h, err := parseHGRM(&b)
	if err != nil || len(h.rows) != 0 || h.total != 0 {
		t.Fatalf("empty: %+v %v", h, err)
	}
}

// A real run's .hgrm re-read: totals equal the answered requests.
func TestLoadHGRMAndTimeline(t *testing.T) {
	s := startLineServer(t, "tcp", "127.0.0.1:0")
	res := runLoad(t, Config{Target: "tcp://" + s.ln.Addr().String(), Conns: 2, Inflight: 4,
		Duration: 2200 * time.Millisecond, Warmup: 100 * time.Millisecond, Timeline: true})
	if len(res.Errors) != 0 || res.Requests == 0 {
		t.Fatalf("requests %d errors %v", res.Requests, res.Errors)
	}
	var b bytes.Buffer
	if err := res.WriteHGRM(&b); err != nil {
		t.Fatal(err)
	}
	checkHGRM(t, b.Bytes(), res.Requests)

	// Every measured completion is in exactly one sample.
	tl := res.Timeline()
	if len(tl) < 2 {
		t.Fatalf("%d samples over 2.2 s, want ≥ 2: %+v", len(tl), tl)
	}
	var sum int64
	for i, s := range tl {
		sum += s.Responses
		if s.Responses > 0 && (s.P50 <= 0 || s.P99 < s.P50) || s.PerSecond <= 0 && s.Responses > 0 {
			t.Errorf("sample %d: %+v", i, s)
		}
		if i > 0 && s.At <= tl[i-1].At {
			t.Errorf("sample %d at %v after %v", i, s.At, tl[i-1].At)
		}
	}
	if sum != res.Requests {
		t.Errorf("samples hold %d responses, the run measured %d: %+v", sum, res.Requests, tl)
	}
}

// Without Config.Timeline no ring is attached and no sample kept.
func TestTimelineOffByDefault(t *testing.T) {
	s := startLineServer(t, "tcp", "127.0.0.1:0")
	res := runLoad(t, Config{Target: "tcp://" + s.ln.Addr().String(), Conns: 1, Requests: 200})
	if res.Timeline() != nil {
		t.Errorf("timeline %v without Config.Timeline", res.Timeline())
	}
}

// Every latency's bucket keeps it within 1.6% (exact below 64 µs), and
// buckets grow with the value.
func TestTimelineBuckets(t *testing.T) {
	prev := -1
	for v := int64(1); v <= histMax; v += 1 + v/97 {
		i := tlIndex(v)
		if i < prev || i < 0 || i >= tlBuckets {
			t.Fatalf("tlIndex(%d) = %d after %d", v, i, prev)
		}
		prev = i
		got := tlValue(i)
		if v < tlLinear && got != v || math.Abs(float64(got-v)) > 0.016*float64(v) {
			t.Fatalf("tlValue(tlIndex(%d)) = %d", v, got)
		}
	}
	if tlIndex(histMax) != tlBuckets-1 && tlIndex(histMax) >= tlBuckets {
		t.Fatalf("histMax bucket %d of %d", tlIndex(histMax), tlBuckets)
	}
}

// The sweep turns one second of two recorders into one sample: counts,
// errors, p50 and p99 of the merged latencies; a last partial second's
// rate is over its own length.
func TestTimelineSweep(t *testing.T) {
	a, b := &tlSlots{}, &tlSlots{}
	sec := int64(time.Second)
	for i := int64(1); i <= 100; i++ { // 1..100 ms, half on each recorder
		rs := a
		if i%2 == 0 {
			rs = b
		}
		out := outOK
		if i > 95 {
			out = outRPC
		}
		rs.add(sec/2, i*int64(time.Millisecond), out)
	}
	a.add(sec+sec/2, int64(time.Millisecond), outTimeout)
	a.add(2*sec+1, int64(time.Millisecond), outOK)
	tl := &timeline{recs: []*tlSlots{a, b}}
	tl.sweep(sec)
	tl.sweep(sec)
	tl.sweep(sec / 10)
	if len(tl.samples) != 3 {
		t.Fatalf("samples %+v, want 3", tl.samples)
	}
	if s := tl.samples[2]; s.Responses != 1 || s.PerSecond != 10 || s.At != 2.1 || math.Abs(float64(s.P50-1000)) > 16 {
		t.Errorf("partial sample %+v, want 1 response over 0.1 s at 1 ms", s)
	}
	s := tl.samples[0]
	if s.Responses != 100 || s.Errors != 5 || s.PerSecond != 100 || s.At != 1 {
		t.Errorf("sample 0 %+v", s)
	}
	if math.Abs(float64(s.P50-50_000)) > 800 || math.Abs(float64(s.P99-99_000)) > 1600 {
		t.Errorf("p50 %d p99 %d µs, want 50000 and 99000", s.P50, s.P99)
	}
	if s := tl.samples[1]; s.Responses != 1 || s.Errors != 1 || s.P50 != 0 {
		t.Errorf("sample 1 (a timeout only) %+v", s)
	}
	for _, rs := range []*tlSlots{a, b} {
		for k := range rs.slots {
			if n := rs.slots[k].lost.Load() + rs.slots[k].errs.Load(); n != 0 {
				t.Errorf("slot %d not emptied", k)
			}
		}
	}
}

var hostileTarget = `http://127.0.0.1:1/mcp?<script>alert(1)</script>`

// The HTML report: the summary, the two charts over time and the
// percentile curve, every provided string escaped.
func TestWriteHTML(t *testing.T) {
	h := newHist()
	for v := int64(1); v <= 1000; v++ {
		_ = h.RecordValue(v)
	}
	r := &Result{Target: hostileTarget, Workload: WorkloadCall, desc: "tools/call <img src=x onerror=alert(2)> {}",
		Requests: 1000, RPS: 500, DurationS: 2, Errors: map[string]int64{}, hist: h,
		timeline: []Sample{{At: 1, Responses: 500, PerSecond: 500, P50: 400, P99: 990}, {At: 2, Responses: 500, PerSecond: 500, P50: 600, P99: 999}}}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "<script") || strings.Contains(out, "<img") {
		t.Error("a provided string became markup")
	}
	if !strings.Contains(out, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the target is not shown, escaped")
	}
	if n := strings.Count(out, "<polyline"); n != 4 {
		t.Errorf("%d polylines, want 4 (responses/s, p50, p99, percentile curve)", n)
	}
	for _, want := range []string{"Throughput over time", "Latency over time", "Latency by percentile", ">99.9%<"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q", want)
		}
	}
}

func TestParseHGRMRejects(t *testing.T) {
	const head = "Value Percentile TotalCount 1/(1-Percentile)\n\n"
	const foot = "#[Mean = 1, StdDeviation = 0]\n#[Max = 1, Total count = 1]\n#[Buckets = 1, SubBuckets = 2048]\n"
	for i, c := range []struct{ in, wantErr string }{
		{"", "header"},
		{"1.0 0.5 1 2.0\n" + foot, "header"},
		{head + "1.0 0.5 1 2.0 9\n" + foot, "5 fields"},
		{head + "x 0.5 1 2.0\n" + foot, "not a finite number"},
		{head + "NaN 0.5 1 2.0\n" + foot, "not a finite number"},
		{head + "1.0 0.5 1.5 2.0\n" + foot, "not an integer"},
		{head + "1.0 1.0 1 inf\n" + foot, "not a finite number"},
		{head + "#[Mean = 1 StdDeviation = 0]\n", "two name = value"},
		{head + "#[Mean = 1, StdDeviation = 0\n", "no closing"},
		{head + "#[Foo = 1, Bar = 2]\n", "unknown names"},
		{head + "#[Max = 1, Total count = 1.5]\n", "Total count"},
		{head + "1.0 1.0 1\n#[Mean = 1, StdDeviation = 0]\n", "footer incomplete"},
		{head + strings.Repeat("9", hgrmMaxLine+1) + "\n" + foot, "too long"},
	} {
		_, err := parseHGRM(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%d: err %v, want %q", i, err, c.wantErr)
		}
	}
	// The hdrhistogram-go library's own print (tabs in the header) is read.
	h := hdrhistogram.New(1, 1000, 3)
	_ = h.RecordValue(10)
	var lib bytes.Buffer
	_, _ = h.PercentilesPrint(&lib, 5, 1)
	lines := strings.Split(lib.String(), "\n")
	if _, err := parseHGRM(strings.NewReader(lines[0] + "\n" + strings.Join(lines[len(lines)-4:], "\n"))); err != nil {
		t.Errorf("the library's header and footer: %v", err)
	}
}

// The listen workload's page adds the delivery latency curve.
func TestWriteHTMLListen(t *testing.T) {
	h, d := newHist(), newHist()
	for v := int64(1); v <= 100; v++ {
		_ = h.RecordValue(v)
		_ = d.RecordValue(10 * v)
	}
	r := &Result{Workload: WorkloadListen, Errors: map[string]int64{}, hist: h, dhist: d}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "<polyline"); n != 2 || !strings.Contains(out, "Delivery latency by percentile") || !strings.Contains(out, "deliveries (100)") {
		t.Errorf("%d polylines; want the request and the delivery curves", n)
	}
}

// Recording into the timeline allocates nothing.
func TestTimelineRecordingAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumented build")
	}
	rec := newRecorder()
	rec.tl.Store(&tlSlots{})
	var done int64
	allocs := testing.AllocsPerRun(1000, func() {
		done += 1_000_000
		rec.finish(true, done-50_000, done, outOK, 0, 0)
		rec.finish(true, done-50_000, done, outRPC, -32602, 0)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per request", allocs)
	}
	if rec.tl.Load().slots[0].counts[tlIndex(50)].Load() == 0 {
		t.Error("nothing recorded")
	}
}

// The final sweep: full seconds at 1 s each; a last partial second drawn
// over its own length, or, when a sliver (the drain), joined to the
// second before it.
func TestTimelineFinalSweep(t *testing.T) {
	sec := int64(time.Second)
	for i, c := range []struct {
		tail       int64 // when the last completions land, after 3 full seconds
		samples    int
		lastN      int64
		lastAt     float64
		lastPerSec float64
	}{
		{tail: 3*sec + sec/2, samples: 4, lastN: 10, lastAt: 3.5, lastPerSec: 20},
		{tail: 3*sec + sec/1000, samples: 3, lastN: 110, lastAt: 3.001, lastPerSec: 110 / 1.001},
	} {
		rec := newRecorder()
		r := &run{cfg: Config{Timeline: true}, base: time.Now(), workers: []*httpWorker{{rec: rec}}}
		r.sched = newSched(r.base, 0, 0, 0, 3*time.Second, 0)
		stop := r.startTimeline()
		for k := int64(0); k < 3; k++ {
			for j := int64(1); j <= 100; j++ {
				done := k*sec + j*sec/101
				rec.finish(true, done-sec/1000, done, outOK, 0, 0)
			}
		}
		for j := range int64(10) {
			rec.finish(true, c.tail-j-sec/1000, c.tail-j, outOK, 0, 0)
		}
		ss := stop()
		if len(ss) != c.samples {
			t.Fatalf("%d: %d samples, want %d: %+v", i, len(ss), c.samples, ss)
		}
		l := ss[len(ss)-1]
		if l.Responses != c.lastN || math.Abs(l.At-c.lastAt) > 1e-6 || math.Abs(l.PerSecond-c.lastPerSec) > 0.01 {
			t.Errorf("%d: last sample %+v, want %d responses at %v, %.2f/s", i, l, c.lastN, c.lastAt, c.lastPerSec)
		}
		if ss[0].Responses != 100 || ss[0].PerSecond != 100 || ss[0].P50 < 990 || ss[0].P50 > 1010 {
			t.Errorf("%d: first sample %+v", i, ss[0])
		}
	}
}
