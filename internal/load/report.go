package load

import (
	"fmt"
	"io"
	"math"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcpwire/mcpwire/internal/chart"
)

// Timeline returns the per-second samples of the measured window (nil
// unless Config.Timeline was set).
func (r *Result) Timeline() []Sample { return r.timeline }

// WriteHTML writes the run as one self-contained HTML page (no fetch of
// any kind): the summary, responses/s and p50/p99 over time (with
// Config.Timeline), and the latency percentile curve (listen: the delivery
// latency curve too). Every string from the target or the flags is escaped.
func (r *Result) WriteHTML(w io.Writer) error {
	p := &chart.Page{Title: "mcpwire load: " + r.Target}
	loop := "closed loop"
	if r.rate > 0 {
		loop = fmt.Sprintf("open loop at %g requests/s", r.rate)
	}
	status := ""
	if r.interrupted {
		status = " (interrupted)"
	}
	p.Facts = []chart.Fact{
		{Name: "target", Value: r.Target},
		{Name: "workload", Value: fmt.Sprintf("%s (%s)", r.Workload, r.desc)},
		{Name: "connections", Value: fmt.Sprintf("%d, %d in flight each, %s", r.Connections, r.Inflight, loop)},
		{Name: "duration", Value: fmt.Sprintf("%.3f s%s", r.DurationS, status)},
		{Name: "requests", Value: fmt.Sprintf("%d (%.1f/s)", r.Requests, r.RPS)},
		{Name: "errors", Value: errorsText(r.Errors, r.Requests)},
		{Name: "latency µs", Value: latencyText(r.LatencyUs)},
		{Name: "client CPU", Value: fmt.Sprintf("%.1f µs per request", r.ClientCPUUsPerReq)},
	}
	if r.Workload == WorkloadListen {
		p.Facts = append(p.Facts,
			chart.Fact{Name: "deliveries", Value: fmt.Sprintf("%d of %d expected (%.1f/s)", r.Deliveries, r.expected, r.DeliveriesPerS)},
			chart.Fact{Name: "delivery latency µs", Value: latencyText(r.DeliveryLatencyUs)})
	}
	if len(r.timeline) > 0 {
		var rps, errs, p50, p99 []chart.Point
		for _, s := range r.timeline {
			rps = append(rps, chart.Point{X: s.At, Y: s.PerSecond})
			errs = append(errs, chart.Point{X: s.At, Y: float64(s.Errors) * s.PerSecond / math.Max(float64(s.Responses), 1)})
			if s.P50 > 0 {
				p50 = append(p50, chart.Point{X: s.At, Y: float64(s.P50)})
				p99 = append(p99, chart.Point{X: s.At, Y: float64(s.P99)})
			}
		}
		series := []chart.Series{{Name: "responses/s", Points: rps}}
		if anyErrors(r.timeline) {
			series = append(series, chart.Series{Name: "errors/s", Points: errs})
		}
		p.Charts = append(p.Charts,
			chart.Line{Title: "Throughput over time", XLabel: "seconds into the measurement", YLabel: "per second", Series: series, XZero: true},
			chart.Line{Title: "Latency over time", XLabel: "seconds into the measurement", YLabel: "µs", XZero: true,
				Series: []chart.Series{{Name: "p50", Points: p50}, {Name: "p99", Points: p99}}})
	}
	p.Charts = append(p.Charts, percentileChart("Latency by percentile", r.hist, "requests"))
	if r.Workload == WorkloadListen {
		p.Charts = append(p.Charts, percentileChart("Delivery latency by percentile", r.dhist, "deliveries"))
	}
	p.Notes = append(p.Notes,
		"Warm-up excluded. Over time: completions per second of the measured window, by completion time; "+
			"p50 and p99 of the answered requests completing in that second (log buckets, within 1.6%). "+
			"Timeouts and connection losses count as responses/s and errors/s but have no latency.",
		"By percentile: the latency at each percentile of the whole window (HdrHistogram, 3 significant digits); "+
			"the X axis is 1/(1−percentile) on a log scale, as HdrHistogram's plotter draws it. "+
			"Open loop (-rate): latency from each request's intended send time.")
	if len(r.timeline) == 0 {
		p.Notes = append(p.Notes, "No samples over time: the run recorded no timeline (Config.Timeline), or nothing completed.")
	}
	return p.Write(w)
}

func anyErrors(ss []Sample) bool {
	for _, s := range ss {
		if s.Errors > 0 {
			return true
		}
	}
	return false
}

// percentileChart draws h's percentile curve on HdrHistogram's X axis:
// log10(1/(1-p)), with ticks at 0%, 90%, 99%, 99.9%… up to the highest
// percentile the count resolves.
func percentileChart(title string, h *hdrhistogram.Histogram, what string) chart.Line {
	l := chart.Line{Title: title, XLabel: "percentile", YLabel: "µs"}
	if h == nil || h.TotalCount() == 0 {
		l.Title += " (no " + what + ")"
		return l
	}
	// The last point (100%) has no finite position; draw the max at the
	// first decade past the resolved ones instead.
	top := math.Ceil(math.Log10(float64(h.TotalCount())))
	var pts []chart.Point
	for _, b := range h.CumulativeDistributionWithTicks(hgrmTicks) {
		p := b.Quantile / 100
		x := top
		if p < 1 {
			x = math.Min(-math.Log10(1-p), top)
		}
		pts = append(pts, chart.Point{X: x, Y: float64(b.ValueAt)})
	}
	l.Series = []chart.Series{{Name: fmt.Sprintf("%s (%d)", what, h.TotalCount()), Points: pts}}
	for d := 0.0; d <= top; d++ {
		l.XTicks = append(l.XTicks, chart.Tick{At: d, Label: nines(int(d))})
	}
	return l
}

// nines labels decade d of the percentile axis: 0%, 90%, 99%, 99.9%…
func nines(d int) string {
	switch d {
	case 0:
		return "0%"
	case 1:
		return "90%"
	case 2:
		return "99%"
	}
	return "99." + strings.Repeat("9", d-2) + "%"
}
