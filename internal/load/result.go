package load

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Result is the outcome of a run. The JSON field names are fixed (the
// `make compare` harness reads them).
type Result struct {
	Target            string           `json:"target"`
	Workload          string           `json:"workload"`
	Connections       int              `json:"connections"`
	Inflight          int              `json:"inflight"`
	DurationS         float64          `json:"duration_s"`
	Requests          int64            `json:"requests"`
	RPS               float64          `json:"rps"`
	Errors            map[string]int64 `json:"errors"`
	LatencyUs         Latency          `json:"latency_us"`
	BytesSent         int64            `json:"bytes_sent"`
	BytesRecv         int64            `json:"bytes_recv"`
	ClientCPUUsPerReq float64          `json:"client_cpu_us_per_req"`
	Deliveries        int64            `json:"deliveries"`
	DeliveriesPerS    float64          `json:"deliveries_per_s"`
	DeliveryLatencyUs Latency          `json:"delivery_latency_us"`
	ProgressPerCall   float64          `json:"progress_per_call"`
	// Loss is set by a listen run with unique URIs only.
	Loss *Loss `json:"loss,omitempty"`

	// Text output only.
	mStart, mEnd int64
	cpuUs        int64
	unsent       int64
	interrupted  bool
	rate         float64
	kind         string
	desc         string
	listeners    int
	acked        int64
	expected     int64
	publishRate  float64
	serverCPUUs  int64 // stdio: CPU of the server processes over their whole life
	allRequests  int64 // warm-up included

	// The .hgrm and HTML reports (report.go).
	hist, dhist *hdrhistogram.Histogram
	timeline    []Sample
}

// Loss is the delivery check of a listen run with unique URIs, where no
// update may collapse into another: Lost counts publishes sent (warm-up
// included) that an acknowledged stream never received, Streams the
// streams missing any, Duplicates publishes received twice on one stream.
// Either count above 0 fails the run (Check).
type Loss struct {
	Lost       int64 `json:"lost"`
	Streams    int64 `json:"streams"`
	Duplicates int64 `json:"duplicates"`
}

// Unsent is how many open-loop requests fell due inside the window but
// could not be sent before it closed.
func (r *Result) Unsent() int64 { return r.unsent }

// WriteJSON writes the result as one JSON object and a newline.
func (r *Result) WriteJSON(w io.Writer) error {
	if r.Errors == nil {
		r.Errors = map[string]int64{}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteText writes the result as a readable block.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(label, format string, args ...any) {
		pad := max(1, 23-utf8.RuneCountInString(label))
		fmt.Fprintf(&b, "%s%s%s\n", label, strings.Repeat(" ", pad), fmt.Sprintf(format, args...))
	}
	p("target", "%s", r.Target)
	p("workload", "%s (%s)", r.Workload, r.desc)
	loop := "closed loop"
	if r.rate > 0 {
		loop = fmt.Sprintf("open loop at %g requests/s (latency from the intended send time)", r.rate)
	}
	if r.Workload == WorkloadListen {
		loop = fmt.Sprintf("open loop, publishing at %g/s", r.publishRate)
	}
	p("connections", "%d, %d in flight each, %s", r.Connections, r.Inflight, loop)
	status := ""
	if r.interrupted {
		status = " (interrupted)"
	}
	p("duration", "%.3f s%s", r.DurationS, status)
	p("requests", "%d (%.1f/s)", r.Requests, r.RPS)
	if r.unsent > 0 {
		p("unsent", "%d fell due but were never sent: every connection stayed busy", r.unsent)
	}
	p("errors", "%s", errorsText(r.Errors, r.Requests))
	p("latency µs", "%s", latencyText(r.LatencyUs))
	p("bytes", "sent %s, received %s", human(r.BytesSent), human(r.BytesRecv))
	p("client CPU", "%.2f µs per request", r.ClientCPUUsPerReq)
	if r.Workload == WorkloadListen && r.Deliveries > 0 {
		p("client CPU/delivery", "%.1f µs", float64(r.cpuUs)/float64(r.Deliveries))
	}
	if r.serverCPUUs > 0 && r.allRequests > 0 {
		p("server CPU (stdio)", "%.1f µs per request (whole run, warm-up and start-up included)", float64(r.serverCPUUs)/float64(r.allRequests))
	}
	if r.Workload == WorkloadProgress {
		p("progress", "%.2f notifications per call", r.ProgressPerCall)
	}
	if r.Workload == WorkloadListen {
		p("listen streams", "%d acknowledged of %d", r.acked, r.listeners)
		p("deliveries", "%d of %d expected (%.1f/s)", r.Deliveries, r.expected, r.DeliveriesPerS)
		p("delivery latency µs", "%s", latencyText(r.DeliveryLatencyUs))
		if l := r.Loss; l != nil {
			p("lost", "%d on %d streams, %d duplicates (one URI per publish: nothing may collapse)", l.Lost, l.Streams, l.Duplicates)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func latencyText(l Latency) string {
	return fmt.Sprintf("p50 %d  p90 %d  p99 %d  p99.9 %d  max %d  mean %.1f", l.P50, l.P90, l.P99, l.P999, l.Max, l.Mean)
}

func errorsText(m map[string]int64, requests int64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	var total int64
	for k, v := range m {
		keys = append(keys, k)
		total += v
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	s := strings.Join(parts, " ")
	if requests > 0 {
		s += fmt.Sprintf(" (%.2f%% of requests)", float64(total)*100/float64(requests))
	}
	return s
}

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// DefaultMaxErrorShare is the share of failed requests past which a run is
// reported as failed (mcpwire load exits non-zero): a run where most
// requests fail measures the failures, not the server.
const DefaultMaxErrorShare = 0.5

// Check reports a run that measured nothing useful: every measured request
// failed, or more than maxShare of them did (maxShare ≥ 1: only the
// first), or, with unique URIs, a stream missed a publish or got one
// twice. The result itself is still printed; this is the exit status.
func (r *Result) Check(maxShare float64) error {
	var failed int64
	for _, n := range r.Errors {
		failed += n
	}
	switch {
	case r.Loss != nil && r.Loss.Lost > 0:
		return fmt.Errorf("%d deliveries lost on %d streams (with unique URIs every stream must receive every publish)", r.Loss.Lost, r.Loss.Streams)
	case r.Loss != nil && r.Loss.Duplicates > 0:
		return fmt.Errorf("%d deliveries received twice on one stream", r.Loss.Duplicates)
	case r.Requests == 0:
		return nil // nothing measured: the report says so
	case failed >= r.Requests:
		return fmt.Errorf("every request failed (%s)", errorsText(r.Errors, r.Requests))
	case maxShare < 1 && float64(failed) > maxShare*float64(r.Requests):
		return fmt.Errorf("%.2f%% of requests failed, over -max-error-share %g (%s)",
			float64(failed)*100/float64(r.Requests), maxShare, errorsText(r.Errors, r.Requests))
	}
	return nil
}
