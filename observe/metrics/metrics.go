package metrics

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/mcpwire/mcpwire/engine"
)

// Namespace prefixes every metric name.
const Namespace = "mcpwire"

// Collector is a prometheus.Collector for an engine and its transports.
// Register it with a prometheus.Registerer; nothing is recorded on its
// behalf: every value is read at scrape time from the counters the engine
// and the transports keep anyway. It is safe for concurrent use; sources
// may be added while it is being scraped.
type Collector struct {
	srv *engine.Server

	mu     sync.Mutex
	stats  []statsSource
	gauges []gaugeFunc
	descs  map[string]*prometheus.Desc // AddGauge's, by name and label names
	limits []limitCounter              // AddLimit's
}

type limitCounter struct {
	limit string
	fn    func() uint64
}

type statsSource struct {
	v        reflect.Value
	fields   []statsField
	snapshot func() any // AddStatsFunc: v is re-read from it at every scrape
}

type statsField struct {
	index int
	desc  *prometheus.Desc
	gauge bool // a level, not a counter
}

type gaugeFunc struct {
	desc   *prometheus.Desc
	values []string // label values
	fn     func() float64
}

// New returns a Collector for srv: the engine's counters (engine.Stats) as
// mcpwire_engine_*, the request-duration histograms
// (mcpwire_request_duration_seconds by method and transport), the
// requests in flight and listen streams per transport, whether the engine
// is shutting down and whether its backplane is up. Add the transports'
// counters and gauges with AddStats and AddGauge.
func New(srv *engine.Server) *Collector {
	c := &Collector{srv: srv}
	c.AddStats("engine", srv.Stats())
	return c
}

// AddStats exports every field of stats, a pointer to a struct of
// sync/atomic values (engine.Stats, streamhttp.Stats, socket.Stats,
// redisstate.Stats, a client's stats…), as mcpwire_<subsystem>_<field>:
// an atomic.Uint64 or an engine.Counter as a counter (with the _total suffix),
// an atomic.Int64 as a gauge. The name and HELP text of each field of the project's Stats
// types are written down in names.go (DuplicateIDs → duplicate_ids); a
// struct of another package names each field with struct tags,
// `metric:"calls" help:"Calls made."`, and AddStats panics on a field
// with no name. Other fields are ignored. Adding the same
// subsystem twice exports both under the same names, which a registry
// refuses at scrape time: give each source its own subsystem.
func (c *Collector) AddStats(subsystem string, stats any) {
	v := reflect.ValueOf(stats)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("metrics: AddStats(%q): want a pointer to a struct, got %T", subsystem, stats))
	}
	v = v.Elem()
	c.addSource(subsystem, statsSource{v: v}, func(t reflect.Type) (gauge, ok bool) {
		switch t {
		case reflect.TypeFor[atomic.Uint64]():
			return false, true
		case reflect.TypeFor[atomic.Int64]():
			return true, true
		}
		// engine.Counter, read through its Load() uint64. Only that type:
		// another struct with a Load method stays ignored, as before.
		return false, t == reflect.TypeFor[engine.Counter]()
	})
}

// uint64Loader is a counter AddStats exports: atomic.Uint64 or
// engine.Counter.
type uint64Loader interface{ Load() uint64 }

// AddStatsFunc exports the fields of the struct snapshot returns, called
// at every scrape, for counters kept as a snapshot of plain values (for
// example client.LineTransport.Stats): a uint64 field as a counter
// mcpwire_<subsystem>_<field>_total, an int64 or int field as a gauge,
// named as by AddStats. snapshot must always return the same struct type.
func (c *Collector) AddStatsFunc(subsystem string, snapshot func() any) {
	v := reflect.ValueOf(snapshot())
	if v.Kind() != reflect.Struct {
		panic(fmt.Sprintf("metrics: AddStatsFunc(%q): want a struct, got %s", subsystem, v.Kind()))
	}
	c.addSource(subsystem, statsSource{v: v, snapshot: snapshot}, func(t reflect.Type) (gauge, ok bool) {
		switch t.Kind() {
		case reflect.Uint64:
			return false, true
		case reflect.Int64, reflect.Int:
			return true, true
		}
		return false, false
	})
}

// addSource describes the exported fields of src.v that kind accepts (a
// gauge, or a counter with the _total suffix) and adds src. Each field's
// name and HELP text come from the table in names.go, or from the field's
// metric and help tags; a field with neither panics (no name is made up).
func (c *Collector) addSource(subsystem string, src statsSource, kind func(reflect.Type) (gauge, ok bool)) {
	t := src.v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		gauge, ok := kind(f.Type)
		if !ok {
			continue
		}
		n, ok := fieldName(t, f)
		if !ok {
			panic(fmt.Sprintf("metrics: %s.%s has no metric name: add it to observe/metrics/names.go or give it metric and help tags", t, f.Name))
		}
		name := Namespace + "_" + subsystem + "_" + n.name
		if !gauge {
			name += "_total"
		}
		src.fields = append(src.fields, statsField{i, prometheus.NewDesc(name, n.help, nil, nil), gauge})
	}
	c.mu.Lock()
	c.stats = append(c.stats, src)
	c.mu.Unlock()
}

// fieldName returns the metric name part and HELP text of field f of the
// struct type t: its entry in statNames, else its metric and help tags.
func fieldName(t reflect.Type, f reflect.StructField) (statName, bool) {
	if n, ok := statNames[t.PkgPath()+"."+t.Name()][f.Name]; ok {
		return n, true
	}
	name, help := f.Tag.Get("metric"), f.Tag.Get("help")
	if name == "" || help == "" {
		return statName{}, false
	}
	return statName{name, help}, true
}

// AddGauge exports fn's value, read at every scrape, as the gauge
// mcpwire_<name> with the given constant labels (name, value pairs).
// Several gauges may share a name with different label values (for
// example open_connections with transport="http" and transport="tcp"):
// they must then have the same label names and help.
func (c *Collector) AddGauge(name, help string, fn func() float64, labels ...string) {
	if len(labels)%2 != 0 {
		panic("metrics: AddGauge: labels come in name, value pairs")
	}
	var names, values []string
	for i := 0; i < len(labels); i += 2 {
		names = append(names, labels[i])
		values = append(values, labels[i+1])
	}
	key := name + "\x00" + strings.Join(names, "\x00")
	c.mu.Lock()
	d := c.descs[key]
	if d == nil {
		d = prometheus.NewDesc(Namespace+"_"+name, help, names, nil)
		if c.descs == nil {
			c.descs = map[string]*prometheus.Desc{}
		}
		c.descs[key] = d
	}
	c.gauges = append(c.gauges, gaugeFunc{d, values, fn})
	c.mu.Unlock()
}

// Describe sends nothing: the Collector is unchecked, as its sources may
// be added after registration.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

var (
	durDesc = prometheus.NewDesc(Namespace+"_request_duration_seconds",
		"Time from a request's arrival (engine.Scope.Begin; on stdio, TCP and Unix the read that delivered it, so the wait behind earlier requests of the same read counts) to its end: the response handed to the transport (on stdio, TCP and Unix, for a request answered where it was read: the end of that read's requests, whose answers leave together), or the listen stream completed.",
		[]string{"method", "transport"}, nil)
	inflightDesc = prometheus.NewDesc(Namespace+"_in_flight_requests",
		"Requests admitted and not yet ended, listen streams included.", []string{"transport"}, nil)
	listensDesc = prometheus.NewDesc(Namespace+"_listen_streams",
		"Open subscriptions/listen streams.", []string{"transport"}, nil)
	closingDesc = prometheus.NewDesc(Namespace+"_shutting_down",
		"1 once the engine's Shutdown has begun.", nil, nil)
	bpDesc = prometheus.NewDesc(Namespace+"_backplane_up",
		"1 while the cross-replica backplane is subscribed (always 1 without one).", nil, nil)
	limitDesc = prometheus.NewDesc(Namespace+"_limit_refused_total",
		"Requests refused (HTTP 429) by a per-caller limit: listen streams, requests in flight, request rate and a tool's rate per principal (engine.LimitStats), and what AddLimit adds.",
		[]string{"limit"}, nil)
)

// AddLimit exports fn's value, read at every scrape, as
// mcpwire_limit_refused_total{limit="<limit>"} next to the engine's own
// per-caller limits (for example transport/legacy's
// Stats.RefusedPerPrincipal as "sessions_per_principal"). Each limit name
// must be added once.
func (c *Collector) AddLimit(limit string, fn func() uint64) {
	c.mu.Lock()
	c.limits = append(c.limits, limitCounter{limit, fn})
	c.mu.Unlock()
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	stats := append([]statsSource(nil), c.stats...)
	gauges := append([]gaugeFunc(nil), c.gauges...)
	limits := append([]limitCounter(nil), c.limits...)
	c.mu.Unlock()

	for _, s := range stats {
		v := s.v
		if s.snapshot != nil {
			v = reflect.ValueOf(s.snapshot())
		}
		for _, f := range s.fields {
			fv := v.Field(f.index)
			var x float64
			switch {
			case s.snapshot != nil && f.gauge:
				x = float64(fv.Int())
			case s.snapshot != nil:
				x = float64(fv.Uint())
			case f.gauge:
				x = float64(fv.Addr().Interface().(*atomic.Int64).Load())
			default: // *atomic.Uint64 or *engine.Counter
				x = float64(fv.Addr().Interface().(uint64Loader).Load())
			}
			vt := prometheus.CounterValue
			if f.gauge {
				vt = prometheus.GaugeValue
			}
			ch <- prometheus.MustNewConstMetric(f.desc, vt, x)
		}
	}

	bounds := engine.DurationBounds()
	c.srv.RequestDurations(func(h *engine.DurationHistogram) {
		buckets := make(map[float64]uint64, len(bounds))
		var cum uint64
		for i, b := range bounds {
			cum += h.Counts[i]
			buckets[b.Seconds()] = cum
		}
		ch <- prometheus.MustNewConstHistogram(durDesc, h.Count, h.Sum.Seconds(), buckets, h.Method, h.Transport)
	})

	for _, l := range c.srv.Load() {
		ch <- prometheus.MustNewConstMetric(inflightDesc, prometheus.GaugeValue, float64(l.InFlight), l.Transport)
		ch <- prometheus.MustNewConstMetric(listensDesc, prometheus.GaugeValue, float64(l.Listens), l.Transport)
	}
	ch <- prometheus.MustNewConstMetric(closingDesc, prometheus.GaugeValue, b2f(c.srv.Closing()))
	ch <- prometheus.MustNewConstMetric(bpDesc, prometheus.GaugeValue, b2f(c.srv.BackplaneUp()))
	c.srv.LimitStats().Each(func(limit string, n uint64) {
		ch <- prometheus.MustNewConstMetric(limitDesc, prometheus.CounterValue, float64(n), limit)
	})
	for _, l := range limits {
		ch <- prometheus.MustNewConstMetric(limitDesc, prometheus.CounterValue, float64(l.fn()), l.limit)
	}

	for _, g := range gauges {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, g.fn(), g.values...)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Registry returns a new registry holding c, the Go runtime's collector
// (goroutines, heap, GC) and the process collector (resident memory, CPU,
// open files): what the admin listener's /metrics serves.
func Registry(c *Collector) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(c)
	r.MustRegister(newGoCollector(), newProcessCollector())
	return r
}

func newGoCollector() prometheus.Collector { return collectors.NewGoCollector() }

func newProcessCollector() prometheus.Collector {
	return collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})
}
