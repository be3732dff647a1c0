package engine

import (
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
	c    *Call
	f    filter
	end  chan struct{} // closed to complete this stream (finishListen)
	once sync.Once
}

// hub fans change notifications out to listen streams. A notification is
// encoded once per event; each subscriber's copy splices in its
// subscription id.
type hub struct {
	srv     *Server
	mu      sync.Mutex
	subs    map[*subscription]struct{}
	closing chan struct{}
	once    sync.Once
	bufPool sync.Pool
}

func (h *hub) init(s *Server) {
	h.srv = s
	h.subs = map[*subscription]struct{}{}
	h.closing = make(chan struct{})
}

func (h *hub) add(sub *subscription) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.closing:
		return false
	default:
	}
	h.subs[sub] = struct{}{}
	h.srv.stats.ListenStreams.Add(1)
	return true
}

func (h *hub) remove(sub *subscription) {
	h.mu.Lock()
	if _, ok := h.subs[sub]; ok {
		delete(h.subs, sub)
		h.srv.stats.ListenStreams.Add(-1)
	}
	h.mu.Unlock()
}

// closeAll wakes every listen handler so that it completes its stream with
// the final result (SUB-10).
func (h *hub) closeAll() { h.once.Do(func() { close(h.closing) }) }

func (h *hub) snapshot(match func(*subscription) bool) []*subscription {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*subscription
	for s := range h.subs {
		if match(s) {
			out = append(out, s)
		}
	}
	return out
}

func (h *hub) listChanged(k subKind) {
	subs := h.snapshot(func(s *subscription) bool {
		switch k {
		case subTools:
			return s.f.ToolsListChanged
		case subPrompts:
			return s.f.PromptsListChanged
		default:
			return s.f.ResourcesListChanged
		}
	})
	if len(subs) == 0 {
		return
	}
	prefix := []byte(`{"jsonrpc":"2.0","method":"` + listChangedMethod[k] + `","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`)
	h.deliver(subs, prefix, []byte(`}}}`))
}

// resourceUpdated notifies subscribers of uri or of a parent of it (SUB-06).
func (h *hub) resourceUpdated(uri string) {
	subs := h.snapshot(func(s *subscription) bool {
		for _, u := range s.f.ResourceSubscriptions {
			if uri == u || (strings.HasPrefix(uri, u) && (strings.HasSuffix(u, "/") || uri[len(u)] == '/')) {
				return true
			}
		}
		return false
	})
	if len(subs) == 0 {
		return
	}
	prefix := []byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`)
	suffix := append(codec.AppendString([]byte(`},"uri":`), uri), "}}"...)
	h.deliver(subs, prefix, suffix)
}

func (h *hub) deliver(subs []*subscription, prefix, suffix []byte) {
	bp, _ := h.bufPool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	for _, s := range subs {
		b := append((*bp)[:0], prefix...)
		b = append(b, s.c.env.ID...)
		b = append(b, suffix...)
		*bp = b
		_ = s.c.notify(b)
	}
	h.bufPool.Put(bp)
}

// listen serves subscriptions/listen: acknowledge first with the honoured
// filter (SUB-03), then deliver until the client cancels or the server
// shuts down, which completes the stream with a final result (SUB-10).
func listen(c *Call) error {
	raw, ok := codec.LookupPath(c.env.Params, "notifications")
	if !ok || len(raw) == 0 || raw[0] != '{' {
		return codec.NewError(codec.CodeInvalidParams, "Invalid params: notifications must be an object")
	}
	var req filter
	if err := codec.Unmarshal(raw, &req); err != nil {
		return codec.NewError(codec.CodeInvalidParams, "Invalid params: "+err.Error())
	}
	caps := c.srv.cache.Load().caps
	sub := &subscription{c: c, end: make(chan struct{}), f: filter{
		ToolsListChanged:     req.ToolsListChanged && caps.tools,
		PromptsListChanged:   req.PromptsListChanged && caps.prompts,
		ResourcesListChanged: req.ResourcesListChanged && caps.resources,
	}}
	if caps.resources {
		sub.f.ResourceSubscriptions = req.ResourceSubscriptions
	}
	enc, err := codec.Marshal(sub.f)
	if err != nil {
		return err
	}
	ack := []byte(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":`)
	ack = append(ack, c.env.ID...)
	ack = append(ack, `},"notifications":`...)
	ack = append(ack, enc...)
	ack = append(ack, `}}`...)

	// The subscription joins the hub only after the ack is written, so no
	// notification for it can precede the ack.
	c.mu.Lock()
	if c.state != stateRunning {
		c.mu.Unlock()
		return nil
	}
	err = c.rep.Notify(c, ack)
	c.sub = sub
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if !c.srv.hub.add(sub) {
		return c.endListen()
	}
	select {
	case <-c.Done():
		return nil // cancelled by the client: no response (SUB-09)
	case <-c.srv.hub.closing:
		return c.endListen()
	case <-sub.end:
		return c.endListen()
	}
}

// finishListen completes c's listen stream with its final result, if c is
// a listen call.
func (c *Call) finishListen() {
	c.mu.Lock()
	sub := c.sub
	c.mu.Unlock()
	if sub != nil {
		sub.once.Do(func() { close(sub.end) })
	}
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
