// Package metricscmp measures what recording one request duration costs
// with each way mcpwire could export it (issue 13): the engine's own
// atomic histogram read at scrape time (what observe/metrics does), a
// client_golang HistogramVec child resolved once, and an OpenTelemetry
// Float64Histogram with its attributes built once, on the SDK's
// MeterProvider with the Prometheus exporter as its reader.
//
//	cd bench && go test -run '^$' -bench . -benchmem ./metricscmp
package metricscmp

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/mcpwire/mcpwire/engine"
)

var buckets = func() []float64 {
	var out []float64
	for _, b := range engine.DurationBounds() {
		out = append(out, b.Seconds())
	}
	return out
}()

const sample = 137 * time.Microsecond

// BenchmarkObserve: one observation of a fixed duration (no clock read:
// that costs the same whichever library records it).
func BenchmarkObserve(b *testing.B) {
	b.Run("engine-atomics", func(b *testing.B) {
		// The engine's path, end to end, is measured by
		// engine.BenchmarkObserve (with its two clock reads); here the
		// same histogram shape recorded with the same two atomic adds.
		h := newAtomicHist()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				h.observe(sample)
			}
		})
	})
	b.Run("client_golang", func(b *testing.B) {
		reg := prometheus.NewRegistry()
		hv := prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mcpwire_request_duration_seconds", Help: "x", Buckets: buckets,
		}, []string{"method", "transport"})
		reg.MustRegister(hv)
		obs := hv.WithLabelValues("tools/call", "http") // resolved once, as a pre-built child
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				obs.Observe(sample.Seconds())
			}
		})
	})
	b.Run("otel-sdk+prometheus-exporter", func(b *testing.B) {
		exp, err := otelprom.New(otelprom.WithRegisterer(prometheus.NewRegistry()))
		if err != nil {
			b.Fatal(err)
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithView(sdkmetric.NewView(
			sdkmetric.Instrument{Name: "mcpwire.request.duration"},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: buckets}},
		)))
		defer func() { _ = mp.Shutdown(context.Background()) }()
		h, err := mp.Meter("mcpwire").Float64Histogram("mcpwire.request.duration", metric.WithUnit("s"))
		if err != nil {
			b.Fatal(err)
		}
		set := attribute.NewSet(attribute.String("method", "tools/call"), attribute.String("transport", "http"))
		ctx := context.Background()
		b.Run("option-per-call", func(b *testing.B) {
			opt := metric.WithAttributeSet(set) // built once; the variadic slice is not
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					h.Record(ctx, sample.Seconds(), opt)
				}
			})
		})
		b.Run("options-prebuilt", func(b *testing.B) {
			opts := []metric.RecordOption{metric.WithAttributeSet(set)}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					h.Record(ctx, sample.Seconds(), opts...)
				}
			})
		})
	})
}
