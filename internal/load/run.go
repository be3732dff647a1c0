package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwire/mcpwire/internal/cputime"
	"github.com/mcpwire/mcpwire/internal/term"
)

// run is the state of one Run.
type run struct {
	cfg  Config
	t    *target
	log  io.Writer
	base time.Time

	sched *sched
	tpls  []*reqTemplate
	mix   []int // indexes into tpls, one cycle of the weighted mix

	bytesIn, bytesOut atomic.Int64

	workers   []*httpWorker
	conns     []*streamConn
	pubConn   *streamConn // tcp/unix listen: the publisher's own socket
	listeners []*httpListener
	lwg       sync.WaitGroup // listener goroutines

	streams   []*listenStream
	streamTab atomic.Pointer[[]*listenStream] // r.streams, for reader goroutines
	pubs      []*pubLog
	shared    *sharedDeliveries
	acks      atomic.Int64
	lerrs     listenErrs
	stopping  atomic.Bool
	seqPrefix []byte       // unique URIs: the touched URIs' JSON prefix ("" otherwise)
	dups      atomic.Int64 // unique URIs: a publish delivered twice on one stream

	pollMu  sync.Mutex
	pollers []*poller // reading the relay sockets (see poll_linux.go)

	sweepStop, sweepDone chan struct{} // the HTTP relay's timeout sweeper

	tlStop func() []Sample // ends the per-second timeline (report_timeline.go)
}

func (r *run) now() int64 { return int64(time.Since(r.base)) }

// pick returns the next template of the cycle for a sender whose position
// is *pos.
func (r *run) pick(pos *int) *reqTemplate { return r.tpls[r.pickIndex(pos)] }

func (r *run) pickIndex(pos *int) int {
	if len(r.mix) == 0 {
		return 0
	}
	i := r.mix[*pos%len(r.mix)]
	*pos++
	return i
}

// warnf writes a warning. Its arguments may quote the server (an RPC
// error's message, a transport error): the line goes through term.Safe.
func (r *run) warnf(format string, args ...any) {
	fmt.Fprintf(r.log, "mcpwire load: %s\n", term.Safe(fmt.Sprintf(format, args...)))
}

// Run performs one load run and returns its result. Cancelling ctx ends
// the run early; the result then covers what was measured so far.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	t, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, t: t, log: cfg.Log, base: time.Now()}
	if r.log == nil {
		r.log = io.Discard
	}
	if err := r.buildTemplates(); err != nil {
		return nil, err
	}
	if err := r.setup(ctx); err != nil {
		r.teardown()
		return nil, err
	}
	res := r.measure(ctx)
	if err := r.teardown(); err != nil {
		r.warnf("%v", err)
	}
	r.collect(res)
	// stdio: the servers' own CPU, known once they have exited.
	var all int64
	for _, rec := range r.recorders() {
		all += rec.live.done.Load()
	}
	for _, sc := range r.conns {
		if sc.cmd != nil && sc.cmd.ProcessState != nil {
			res.serverCPUUs += (sc.cmd.ProcessState.UserTime() + sc.cmd.ProcessState.SystemTime()).Microseconds()
		}
	}
	res.allRequests = all
	return res, nil
}

// buildTemplates prepares the request bodies of the workload.
func (r *run) buildTemplates() error {
	c := &r.cfg
	switch c.Workload {
	case WorkloadCall:
		args, err := compactObject("-args", c.Args)
		if err != nil {
			return err
		}
		r.tpls = []*reqTemplate{newTemplate("tools/call", callParams(c.Tool, args), !c.NoProgressToken)}
	case WorkloadProgress:
		args := fmt.Sprintf(`{"ms":%d,"steps":%d}`, c.SleepMs, c.Steps)
		r.tpls = []*reqTemplate{newTemplate("tools/call", callParams("sleep", []byte(args)), true)}
	case WorkloadListen:
		if c.UniqueURIs {
			// {"uri":"URI/k"}: the k-th publish names its own sub-resource.
			args := append([]byte(`{"uri":`), seqURI(c.URI)...)
			args = append(append(args, seqMark...), `"}`...)
			r.tpls = []*reqTemplate{newTemplate("tools/call", callParams("touch", args), false).withSeq()}
			r.seqPrefix = seqURI(c.URI)
			break
		}
		args, _ := json.Marshal(map[string]string{"uri": c.URI})
		r.tpls = []*reqTemplate{newTemplate("tools/call", callParams("touch", args), false)}
	case WorkloadMix:
		es, err := parseMix(c.Mix)
		if err != nil {
			return err
		}
		for _, e := range es {
			switch e.method {
			case "tools/call":
				args, err := compactObject("-args", c.Args)
				if err != nil {
					return err
				}
				r.tpls = append(r.tpls, newTemplate(e.method, callParams(c.Tool, args), false))
			case "resources/read":
				p, _ := json.Marshal(c.URI)
				r.tpls = append(r.tpls, newTemplate(e.method, append(append([]byte(`"uri":`), p...), ','), false))
			default:
				r.tpls = append(r.tpls, newTemplate(e.method, nil, false))
			}
		}
		r.mix = mixSequence(es)
	}
	return nil
}

// toolOf names the tool a tools/call template calls.
func (r *run) toolOf() string {
	switch r.cfg.Workload {
	case WorkloadProgress:
		return "sleep"
	case WorkloadListen:
		return "touch"
	}
	return r.cfg.Tool
}

// setup opens every connection (and every listen stream) before the clock
// starts.
func (r *run) setup(ctx context.Context) error {
	c := &r.cfg
	listen := c.Workload == WorkloadListen
	if r.t.kind == "http" {
		if err := r.httpHeads(); err != nil {
			return err
		}
		n := c.Conns
		if listen {
			n = 1
		}
		r.workers = make([]*httpWorker, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		sem := make(chan struct{}, 64)
		relay := r.httpRelay()
		for i := range n {
			r.workers[i] = r.newHTTPWorker(i)
			wg.Go(func() {
				sem <- struct{}{}
				if relay {
					errs[i] = r.workers[i].setupRelay(i)
				} else {
					errs[i] = r.workers[i].conn.dial(c.Timeout)
				}
				<-sem
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("connect to %s: %w", r.t.addr, firstErr(errs))
		}
	} else {
		for i := range c.Conns {
			sc, err := r.openStream(i)
			if err != nil {
				return err
			}
			r.conns = append(r.conns, sc)
		}
		if listen && r.t.kind != "stdio" {
			sc, err := r.openStream(c.Conns)
			if err != nil {
				return err
			}
			r.pubConn = sc
		}
	}
	if listen {
		return r.openListens(ctx)
	}
	return nil
}

func firstErr(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// pubCapacity sizes a publish log for the whole run.
func (r *run) pubCapacity() int {
	c := &r.cfg
	n := c.PublishRate*(c.Warmup+c.Duration).Seconds()*1.05 + 1024
	if c.Duration == 0 {
		n = c.PublishRate*c.Warmup.Seconds()*1.05 + float64(c.Requests) + 1024
	}
	return int(min(n, 8<<20)) // beyond 8M publishes, deliveries are counted but not timed
}

// openListens opens the listen streams and waits for their
// acknowledgements, so that every stream sees every publish.
func (r *run) openListens(ctx context.Context) error {
	c := &r.cfg
	r.streams = make([]*listenStream, c.Listeners)
	switch {
	case r.t.kind == "http":
		pub := newPubLog(r.pubCapacity())
		r.pubs = []*pubLog{pub}
		r.workers[0].pub = pub
		r.shared = newSharedDeliveries(max(4, 2*runtime.GOMAXPROCS(0)))
		head := httpHead(r.t, "subscriptions/listen", nil, nil)
		sem := make(chan struct{}, 64)
		for k := range r.streams {
			s := &listenStream{k: k, pub: pub}
			r.streams[k] = s
			l := &httpListener{r: r, s: s, req: fullHTTP(head, listenBody(k, c.URI))}
			l.conn = httpConn{addr: r.t.addr, tls: r.t.conf, bufSize: 4 << 10, in: &r.bytesIn, out: &r.bytesOut}
			r.listeners = append(r.listeners, l)
		}
		for _, l := range r.listeners {
			r.lwg.Go(func() { l.run(sem) })
		}
	default:
		pc := r.pubConn
		if pc != nil {
			pc.pub = newPubLog(r.pubCapacity())
			r.pubs = []*pubLog{pc.pub}
		} else {
			for _, sc := range r.conns {
				sc.pub = newPubLog(r.pubCapacity())
				r.pubs = append(r.pubs, sc.pub)
			}
		}
		for k := range r.streams {
			sc := r.conns[k%len(r.conns)]
			pub := sc.pub
			if pc != nil {
				pub = pc.pub
			}
			r.streams[k] = &listenStream{k: k, pub: pub, conn: sc}
		}
		r.streamTab.Store(&r.streams)
		for k, s := range r.streams {
			if err := s.conn.writeFrame(listenBody(k, c.URI)); err != nil {
				return fmt.Errorf("send listen request: %w", err)
			}
		}
	}
	// Wait for the acknowledgements (SUB-03).
	deadline := time.Now().Add(c.Timeout + time.Duration(c.Listeners)*time.Millisecond)
	for r.acks.Load() < int64(c.Listeners) && time.Now().Before(deadline) && ctx.Err() == nil {
		if r.failedStreams() == c.Listeners {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	acked := r.acks.Load()
	if acked == 0 {
		return fmt.Errorf("no listen stream was acknowledged (%s)", r.lerrs.summary())
	}
	if acked < int64(c.Listeners) {
		r.warnf("%d of %d listen streams acknowledged in time; the others count only the publishes sent after their acknowledgement", acked, c.Listeners)
	}
	return nil
}

func (r *run) failedStreams() int {
	n := 0
	for _, s := range r.streams {
		if s.state.Load() == streamFailed {
			n++
		}
	}
	return n
}

func (e *listenErrs) summary() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.m) == 0 {
		return "no answer"
	}
	var parts []string
	for k, v := range e.m {
		parts = append(parts, k+"="+strconv.FormatInt(v, 10))
	}
	sort.Strings(parts)
	return fmt.Sprint(parts)
}

// snapshot is what the measurement window is cut with.
type snapshot struct {
	cpuUs   int64
	in, out int64
	taken   bool
}

func (r *run) snap() snapshot {
	return snapshot{cpuUs: cputime.Process().Microseconds(), in: r.bytesIn.Load(), out: r.bytesOut.Load(), taken: true}
}

// measure runs the warm-up and the measurement and returns a result with
// the window filled in (counters are merged by collect).
func (r *run) measure(ctx context.Context) *Result {
	c := &r.cfg
	rate := c.Rate
	if c.Workload == WorkloadListen {
		rate = c.PublishRate
	}
	t0 := time.Duration(r.now())
	r.sched = newSched(r.base, rate, t0, c.Warmup, c.Duration, c.Requests)
	s := r.sched
	r.tlStop = r.startTimeline()

	var senders sync.WaitGroup
	switch {
	case r.t.kind == "http" && r.httpRelay():
		r.startHTTPSweep()
		for _, w := range r.workers {
			senders.Go(w.relayLoop)
		}
	case r.t.kind == "http":
		for _, w := range r.workers {
			senders.Go(w.loop)
		}
	case r.pubConn != nil:
		senders.Go(r.pubConn.sendLoop)
	default:
		for _, sc := range r.conns {
			senders.Go(sc.sendLoop)
		}
	}
	done := make(chan struct{})
	go func() { senders.Wait(); close(done) }()

	var interrupted atomic.Bool
	go func() {
		select {
		case <-ctx.Done():
			interrupted.Store(true)
			s.stop()
		case <-done:
		}
	}()
	progDone := make(chan struct{})
	progStop := make(chan struct{})
	go func() { defer close(progDone); r.progressLine(progStop) }()

	var snap0 snapshot
	if d := time.Duration(s.mStart - r.now()); d > 0 {
		tm := time.NewTimer(d)
		select {
		case <-tm.C:
			snap0 = r.snap()
		case <-done:
		}
		tm.Stop()
	} else {
		snap0 = r.snap()
	}
	<-done
	// Requests still in flight on stream connections.
	var wg sync.WaitGroup
	for _, sc := range r.allConns() {
		wg.Go(sc.drain)
	}
	wg.Wait()
	if c.Workload == WorkloadListen {
		r.drainDeliveries(ctx)
	}
	snap1 := r.snap()
	close(progStop)
	<-progDone

	res := &Result{}
	mEnd := s.end
	switch {
	case interrupted.Load():
		res.interrupted = true
		if at := s.stopAt.Load(); s.end == 0 || at < s.end {
			mEnd = at
		}
	case s.end == 0 || s.limitHit.Load():
		mEnd = 0 // the request count ended the run: up to the last answer
	}
	res.mStart, res.mEnd = s.mStart, mEnd
	if snap0.taken {
		res.cpuUs = snap1.cpuUs - snap0.cpuUs
		res.BytesSent = snap1.out - snap0.out
		res.BytesRecv = snap1.in - snap0.in
	}
	if !res.interrupted {
		res.unsent = s.unsent()
	}
	return res
}

// allConns lists every stream connection.
func (r *run) allConns() []*streamConn {
	cs := append([]*streamConn(nil), r.conns...)
	if r.pubConn != nil {
		cs = append(cs, r.pubConn)
	}
	return cs
}

// drainDeliveries waits until every live stream has received every publish
// (or the timeout passes).
func (r *run) drainDeliveries(ctx context.Context) {
	deadline := time.Now().Add(r.cfg.Timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		pending := false
		for _, s := range r.streams {
			if !s.acked.Load() || s.state.Load() != streamOpen {
				continue
			}
			if r.seqPrefix != nil && s.pending() || r.seqPrefix == nil && s.count.Load() < s.pub.expectedSince(s.from.Load()) {
				pending = true
				break
			}
		}
		if !pending {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// teardown ends listen streams and closes every connection; stdio servers
// get their stdin closed and are waited for (STD-11).
func (r *run) teardown() error {
	r.stopping.Store(true)
	for _, l := range r.listeners {
		l.stop()
	}
	r.lwg.Wait()
	for _, sc := range r.allConns() {
		select {
		case <-sc.dead:
			r.warnf("connection %d to the server ended early: %v", sc.idx, sc.readErr)
		default:
		}
	}
	for _, s := range r.streams {
		if s != nil && s.conn != nil && s.state.Load() == streamOpen {
			_ = s.conn.writeFrame(cancelListen(s.k))
		}
	}
	r.stopHTTPSweep()
	if r.t.kind == "http" && r.httpRelay() {
		r.stopPollers() // before their sockets close
	}
	for _, w := range r.workers {
		w.conn.close()
		w.closeRelay()
	}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, sc := range r.allConns() {
		wg.Go(func() {
			if err := sc.shutdown(5 * time.Second); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	r.stopPollers()
	return errors.Join(errs...)
}

// progressLine prints a live line every second until stop is closed. The
// lines fall on whole seconds from the start of the run, plus one at the
// end of the warm-up, so that each covers the warm-up or the measurement,
// never both. A line is labelled by the interval it closes, and during the
// measurement it counts measured requests only (warm-up requests that
// finish late are left out).
func (r *run) progressLine(stop chan struct{}) {
	if r.cfg.Progress == nil {
		return
	}
	s := r.sched
	tm := time.NewTimer(time.Hour)
	defer tm.Stop()
	tty := !r.cfg.ProgressNewline
	var last int64 // the count of this phase at the previous line
	prevPhase := ""
	due := s.t0
	for {
		prev := due
		due = progressDue(prev, s.t0, s.mStart)
		tm.Reset(time.Duration(due - r.now()))
		select {
		case <-stop:
			if tty {
				fmt.Fprint(r.cfg.Progress, "\r\033[K")
			}
			return
		case <-tm.C:
		}
		var done, errs, warm, warmErrs int64
		for _, rec := range r.recorders() {
			done += rec.live.done.Load()
			errs += rec.live.errs.Load()
			warm += rec.live.warm.Load()
			warmErrs += rec.live.warmErrs.Load()
		}
		phase := "warm-up"
		if due > s.mStart {
			phase = "run"
			done, errs = done-warm, errs-warmErrs
		}
		if phase != prevPhase {
			last, prevPhase = 0, phase
		}
		var deliv int64
		for _, s := range r.streams {
			deliv += s.count.Load()
		}
		rps := float64(done-last) * 1e9 / float64(due-prev)
		line := fmt.Sprintf("%6.1fs %-7s requests %d  rps %.0f  errors %d",
			float64(r.now()-s.t0)/1e9, phase, done, rps, errs)
		if r.cfg.Workload == WorkloadListen {
			line += fmt.Sprintf("  deliveries %d", deliv)
		}
		last = done
		if tty {
			fmt.Fprintf(r.cfg.Progress, "\r\033[K%s", line)
		} else {
			fmt.Fprintln(r.cfg.Progress, line)
		}
	}
}

// progressDue is when the progress line after the one due at prev is due:
// the next whole second from t0, or the end of the warm-up when it comes
// first.
func progressDue(prev, t0, mStart int64) int64 {
	next := t0 + ((prev-t0)/int64(time.Second)+1)*int64(time.Second)
	if prev < mStart && mStart < next {
		return mStart
	}
	return next
}

// recorders lists every recorder of the run.
func (r *run) recorders() []*recorder {
	var out []*recorder
	for _, w := range r.workers {
		out = append(out, w.rec)
	}
	for _, sc := range r.allConns() {
		out = append(out, sc.rec)
	}
	return out
}

// collect merges the goroutines' results into res.
func (r *run) collect(res *Result) {
	c := &r.cfg
	res.Target, res.Workload, res.Inflight = c.Target, c.Workload, c.Inflight
	res.Connections = c.Conns
	if c.Workload == WorkloadListen {
		switch {
		case r.t.kind == "http":
			res.Connections = c.Listeners + 1
		case r.pubConn != nil:
			res.Connections = c.Conns + 1
		}
	}
	res.Errors = map[string]int64{}
	lat, dlat := newHist(), newHist()
	var answered, progress, lastDone int64
	for _, sc := range r.allConns() {
		sc.mergeOOB()
	}
	for _, w := range r.workers {
		w.mergeOOB()
	}
	for _, rec := range r.recorders() {
		res.Requests += rec.requests
		rec.errs.mergeInto(res.Errors)
		lat.Merge(rec.lat)
		if rec.dlat != nil {
			dlat.Merge(rec.dlat)
		}
		res.Deliveries += rec.deliver
		answered += rec.answered
		progress += rec.progress
		lastDone = max(lastDone, rec.lastDone)
	}
	if r.shared != nil {
		for i := range r.shared.shards {
			sh := &r.shared.shards[i]
			res.Deliveries += sh.n
			dlat.Merge(sh.h)
		}
	}
	r.lerrs.mu.Lock()
	for k, v := range r.lerrs.m {
		res.Errors[k] += v
	}
	r.lerrs.mu.Unlock()

	if res.mEnd == 0 {
		res.mEnd = lastDone
	}
	if res.mEnd > res.mStart {
		res.DurationS = float64(res.mEnd-res.mStart) / 1e9
	}
	if res.DurationS > 0 {
		res.RPS = round1(float64(res.Requests) / res.DurationS)
		res.DeliveriesPerS = round1(float64(res.Deliveries) / res.DurationS)
		res.DurationS = float64(int64(res.DurationS*1000+0.5)) / 1000
	}
	if res.Requests > 0 {
		res.ClientCPUUsPerReq = float64(int64(float64(res.cpuUs)/float64(res.Requests)*100+0.5)) / 100 // sub-µs figures: two decimals
	}
	if c.Workload == WorkloadProgress && answered > 0 {
		res.ProgressPerCall = float64(int64(float64(progress)/float64(answered)*100+0.5)) / 100
	}
	res.LatencyUs = summarize(lat)
	res.DeliveryLatencyUs = summarize(dlat)
	res.hist, res.dhist, res.timeline = lat, dlat, r.tlStop() // the .hgrm and HTML reports

	// Text-only details.
	res.rate = c.Rate
	res.kind = r.t.kind
	res.desc = r.describe()
	if c.Workload == WorkloadListen {
		res.listeners = c.Listeners
		res.acked = r.acks.Load()
		measured := map[*pubLog]int64{} // per log, once: not once per stream
		for _, p := range r.pubs {
			measured[p] = p.measuredSince(0)
		}
		for _, s := range r.streams {
			switch from := s.from.Load(); {
			case !s.acked.Load():
			case from == 0:
				res.expected += measured[s.pub]
			default: // acknowledged late: the measured publishes since
				res.expected += s.pub.measuredSince(from)
			}
		}
		if r.seqPrefix != nil {
			// Nothing may collapse: every acknowledged stream must have
			// received every publish that succeeded since it was
			// acknowledged (warm-up included), failed streams too.
			l := &Loss{Duplicates: r.dups.Load()}
			for _, s := range r.streams {
				if !s.acked.Load() {
					continue
				}
				if miss := s.lost(); miss > 0 {
					l.Lost += miss
					l.Streams++
				}
			}
			res.Loss = l
		}
		res.publishRate = c.PublishRate
	}
	if res.unsent > 0 {
		if c.Workload == WorkloadListen {
			r.warnf("%d publishes fell due but could not be sent before the end (touch could not keep up with -publish-rate %g)", res.unsent, c.PublishRate)
		} else {
			r.warnf("%d requests fell due but were never sent: every connection was busy until the end (the server, or this generator, could not keep up with -rate %g)", res.unsent, c.Rate)
		}
	}
	if l := res.Loss; l != nil && l.Lost > 0 {
		r.warnf("%d deliveries lost on %d of %d streams (every stream must receive every publish)", l.Lost, l.Streams, res.acked)
	}
	if e := res.expected; e > 0 && res.Deliveries < e {
		r.warnf("%d of %d expected deliveries arrived", res.Deliveries, e)
	}
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

// describe names what the workload sends.
func (r *run) describe() string {
	c := &r.cfg
	switch c.Workload {
	case WorkloadCall:
		return "tools/call " + c.Tool + " " + c.Args
	case WorkloadMix:
		return c.Mix
	case WorkloadProgress:
		return fmt.Sprintf("tools/call sleep {ms:%d, steps:%d} with a progressToken", c.SleepMs, c.Steps)
	default:
		if c.UniqueURIs {
			return fmt.Sprintf("%d listen streams on %s, tools/call touch of %s/k at %g/s", c.Listeners, c.URI, c.URI, c.PublishRate)
		}
		return fmt.Sprintf("%d listen streams on %s, tools/call touch at %g/s", c.Listeners, c.URI, c.PublishRate)
	}
}
