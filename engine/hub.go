package engine

import (
	"errors"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/mcpwire/mcpwire/codec"
)

// Subscription kinds a listen stream can opt into (SUB-01).
type subKind uint8

const (
	subTools subKind = iota
	subPrompts
	subResources
	subUpdated
)

var listChangedMethod = [...]string{
	subTools:     "notifications/tools/list_changed",
	subPrompts:   "notifications/prompts/list_changed",
	subResources: "notifications/resources/list_changed",
}

// filter is a SubscriptionFilter (SUB-01).
type filter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

type subscription struct {
	c   *Call
	id  []byte // the listen request's raw id, owned (the Call may be recycled)
	f   filter
	kn  KeyedNotifier // c's Replier, when it can collapse
	idx int           // position in hub.subs, guarded by hub.mu
}

// hub fans change notifications out to listen streams. A notification is
// encoded once per event (a prefix and a suffix); each listener's frame
// splices its subscription id in between. Delivery goes through the
// listener's Replier, which only queues (HTTP) or hands the frame to the
// connection's batched writer (streams): no hub lock is held while a
// Replier runs. A listen stream holds no goroutine of the engine: its Call
// is detached after the acknowledgement and completed by the client's
// cancellation, by Drain, or by Shutdown (SUB-10).
type hub struct {
	srv     *Server
	mu      sync.RWMutex
	subs    []*subscription
	closing chan struct{}
	once    sync.Once
	seed    maphash.Seed
	bufs    sync.Pool // *[]byte frame buffers
	snaps   sync.Pool // *[]*subscription
}

func (h *hub) init(s *Server) {
	h.srv = s
	h.closing = make(chan struct{})
	h.seed = maphash.MakeSeed()
}

func (h *hub) add(sub *subscription) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.closing:
		return false
	default:
	}
	sub.idx = len(h.subs)
	h.subs = append(h.subs, sub)
	h.srv.stats.ListenStreams.Add(1)
	return true
}

func (h *hub) remove(sub *subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := sub.idx
	if i < 0 || i >= len(h.subs) || h.subs[i] != sub {
		return
	}
	last := len(h.subs) - 1
	h.subs[i] = h.subs[last]
	h.subs[i].idx = i
	h.subs[last] = nil
	h.subs = h.subs[:last]
	sub.idx = -1
	h.srv.stats.ListenStreams.Add(-1)
}

// closeAll completes every listen stream with its final result (SUB-10)
// and refuses new subscriptions.
func (h *hub) closeAll() {
	h.once.Do(func() { close(h.closing) })
	sp := h.snapshot(func(*subscription) bool { return true })
	subs := append([]*subscription(nil), *sp...)
	h.putSnapshot(sp)
	for _, s := range subs {
		s.c.finishDetached(true, s)
	}
}

// snapshot returns the matching subscribers in a pooled slice; give it
// back with putSnapshot.
func (h *hub) snapshot(match func(*subscription) bool) *[]*subscription {
	sp, _ := h.snaps.Get().(*[]*subscription)
	if sp == nil {
		sp = new([]*subscription)
	}
	out := (*sp)[:0]
	h.mu.RLock()
	for _, s := range h.subs {
		if match(s) {
			out = append(out, s)
		}
	}
	h.mu.RUnlock()
	*sp = out
	return sp
}

func (h *hub) putSnapshot(sp *[]*subscription) {
	clear(*sp)
	*sp = (*sp)[:0]
	h.snaps.Put(sp)
}

// wantsList reports whether s listens for list changes of kind k.
func (s *subscription) wantsList(k subKind) bool {
	switch k {
	case subTools:
		return s.f.ToolsListChanged
	case subPrompts:
		return s.f.PromptsListChanged
	default:
		return s.f.ResourcesListChanged
	}
}

// wantsUpdate reports whether s listens for updates of uri: it subscribed
// to uri or to a parent of it (SUB-06).
func (s *subscription) wantsUpdate(uri string) bool {
	for _, u := range s.f.ResourceSubscriptions {
		if uri == u || (strings.HasPrefix(uri, u) && (strings.HasSuffix(u, "/") || uri[len(u)] == '/')) {
			return true
		}
	}
	return false
}

func (h *hub) listChanged(k subKind) {
	sp := h.snapshot(func(s *subscription) bool { return s.wantsList(k) })
	if len(*sp) > 0 {
		prefix := []byte(`{"jsonrpc":"2.0","method":"` + listChangedMethod[k] + `","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`)
		h.deliver(*sp, prefix, []byte(`}}}`), maphash.String(h.seed, listChangedMethod[k]))
	}
	h.putSnapshot(sp)
}

// resourceUpdated notifies subscribers of uri or of a parent of it (SUB-06).
func (h *hub) resourceUpdated(uri string) {
	sp := h.snapshot(func(s *subscription) bool { return s.wantsUpdate(uri) })
	if len(*sp) > 0 {
		bp, _ := h.bufs.Get().(*[]byte)
		if bp == nil {
			bp = new([]byte)
		}
		suffix := append(codec.AppendString(append((*bp)[:0], `},"uri":`...), uri), "}}"...)
		// The key of an update is its URI's hash; list-change keys hash
		// method names, which are not URIs.
		h.deliver(*sp, updatedPrefix, suffix, maphash.String(h.seed, uri))
		*bp = suffix
		h.bufs.Put(bp)
	}
	h.putSnapshot(sp)
}

var updatedPrefix = []byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`)

// deliver writes prefix + subscription id + suffix to each subscriber.
func (h *hub) deliver(subs []*subscription, prefix, suffix []byte, key uint64) {
	bp, _ := h.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := *bp
	for _, s := range subs {
		b = append(b[:0], prefix...)
		b = append(b, s.id...)
		b = append(b, suffix...)
		if s.c.notifyKeyed(b, key, s) == nil {
			h.srv.stats.Deliveries.Add(1)
		}
	}
	*bp = b
	h.bufs.Put(bp)
}

// notifyKeyed writes a listen-stream notification while the call still
// serves subscription sub: a publisher's snapshot may name a stream that
// has just ended, whose Call may already serve another request.
func (c *Call) notifyKeyed(frame []byte, key uint64, sub *subscription) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sub != sub || c.state != stateRunning {
		return errNotRunning
	}
	if sub.kn != nil {
		return sub.kn.NotifyKeyed(c.req(), frame, key)
	}
	return c.rep.Notify(c.req(), frame)
}

// errDetached is returned by a handler that leaves its call open after
// returning (a listen stream); whoever ends the stream completes it.
var errDetached = errors.New("engine: call detached")

// listen serves subscriptions/listen: acknowledge first with the honoured
// filter (SUB-03), join the hub, and detach: the stream then lives until
// the client cancels it (SUB-09) or the server ends it with a final result
// (SUB-10).
func listen(c *Call) error {
	raw, ok := codec.LookupPath(c.env.Params, "notifications")
	if !ok || len(raw) == 0 || raw[0] != '{' {
		return codec.NewError(codec.CodeInvalidParams, "Invalid params: notifications must be an object")
	}
	var req filter
	if err := codec.Unmarshal(raw, &req); err != nil {
		return codec.NewError(codec.CodeInvalidParams, "Invalid params: "+err.Error())
	}
	caps := c.srv.regs().caps
	sub := &subscription{c: c, id: append([]byte(nil), c.env.ID...), idx: -1, f: filter{
		ToolsListChanged:     req.ToolsListChanged && caps.tools,
		PromptsListChanged:   req.PromptsListChanged && caps.prompts,
		ResourcesListChanged: req.ResourcesListChanged && caps.resources,
	}}
	if caps.resources {
		sub.f.ResourceSubscriptions = req.ResourceSubscriptions
	}
	sub.kn, _ = c.rep.(KeyedNotifier)
	enc, err := codec.Marshal(sub.f)
	if err != nil {
		return err
	}
	ack := []byte(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`)
	ack = append(ack, c.env.ID...)
	ack = append(ack, `},"notifications":`...)
	ack = append(ack, enc...)
	ack = append(ack, `}}`...)

	// The subscription joins the hub and the ack is written under c.mu: a
	// publisher that already sees the subscription waits on c.mu in
	// notifyKeyed, so nothing for it precedes the ack (SUB-03), and every
	// change published after the client has read the ack reaches it.
	if !c.srv.BackplaneUp() {
		c.srv.stats.ListenRefused.Add(1)
		return errListenUnavailable
	}
	if h := c.srv.hooks; h != nil {
		c.listening, c.rare = true, true
		if h.ListenStart != nil {
			h.ListenStart(c) // before the lock: it may use the Call
		}
	}
	c.mu.Lock()
	if c.state != stateRunning {
		c.mu.Unlock()
		return nil
	}
	c.sub, c.rare = sub, true // (complete tests sub only with rare)
	// A scope shutting down (Scope.Shutdown) ends its listen streams from
	// a list taken once: one that detaches after that pass is ended here,
	// as when the hub is closed. Checked under c.mu, where detached is
	// set, so the pass either finds the stream detached or it is ended
	// here.
	joined := (c.scope == nil || !c.scope.shut.Load()) && c.srv.hub.add(sub)
	// The backplane may have been lost between the check above and the
	// join: the loss marks the state before it snapshots the hub, so a
	// stream that joined after the snapshot sees it here (backplane.go).
	if joined && !c.srv.BackplaneUp() {
		c.sub = nil
		c.mu.Unlock()
		c.srv.hub.remove(sub)
		c.srv.stats.ListenRefused.Add(1)
		return errListenUnavailable
	}
	if err := c.rep.Notify(c.req(), ack); err != nil || !joined {
		c.sub = nil
		c.mu.Unlock()
		if joined {
			c.srv.hub.remove(sub)
		}
		if err != nil {
			return err
		}
		return c.endListen() // shutting down: end at once
	}
	c.own() // the stream outlives the handler (and the transport's buffer)
	if c.stagedCap != 0 {
		c.unstage() // and its answer is written and sent from elsewhere
	}
	c.detached, c.rare = true, true
	c.mu.Unlock()
	return errDetached // the call may be completed and recycled from here on
}

// finishDetached completes a detached call once: with the listen stream's
// final result (withResult) or silently (cancelled). With sub set, only
// while the call still serves that subscription (a snapshot taken by
// another goroutine may name a stream that has ended meanwhile).
func (c *Call) finishDetached(withResult bool, sub *subscription) {
	c.mu.Lock()
	// c.sub first, as in interrupt (backplane.go).
	if (sub != nil && c.sub != sub) || !c.detached || c.detachDone {
		c.mu.Unlock()
		return
	}
	c.detachDone, c.rare = true, true
	c.mu.Unlock()
	if withResult {
		c.serverEnded = true
		_ = c.endListen()
	}
	c.complete()
}

// endListen sets the server-initiated completion result of a listen stream.
func (c *Call) endListen() error {
	c.startResult()
	c.out = append(c.out, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":`...)
	c.out = append(c.out, c.env.ID...)
	// serverInfo sits beside the subscription id (SUB-10).
	meta := c.srv.serverMeta
	c.out = append(c.out, ',')
	c.out = append(c.out, meta[1:]...) // drop '{' of the serverInfo object, keep its '}'
	c.out = append(c.out, '}')
	return nil
}
