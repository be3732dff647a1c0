package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// Filter selects what a listen stream carries (SUB-01).
type Filter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// EventKind tells Events apart.
type EventKind uint8

const (
	// EventAcknowledged: the server acknowledged the stream; Ack is the
	// subset it honours (SUB-03, SUB-04).
	EventAcknowledged EventKind = iota + 1
	// EventNotification: a change notification (Method, Params).
	EventNotification
	// EventRelistened: the stream broke and was opened again with a new
	// id; changes in between are lost, so re-fetch what you cache (SSE-09,
	// STD-14, SUB-12).
	EventRelistened
)

// Event is one thing a Subscription reports.
type Event struct {
	Kind   EventKind
	Method string          // EventNotification
	Params json.RawMessage // EventNotification
	URI    string          // notifications/resources/updated
	Ack    *Filter         // EventAcknowledged
}

// Subscription is one subscriptions/listen stream, re-opened when it
// breaks. Events is closed when it ends; Err then says why (nil: the
// server completed it, SUB-10, or Close was called).
type Subscription struct {
	c      *Client
	filter Filter
	events chan Event
	stop   chan struct{}
	done   chan struct{}
	err    error
	id     []byte // id of the stream in use (tests)
}

// Events is the stream of events; it is closed when the subscription ends.
func (s *Subscription) Events() <-chan Event { return s.events }

// Err is why the subscription ended; valid once Events is closed.
func (s *Subscription) Err() error {
	<-s.done
	return s.err
}

// Close ends the subscription (HTTP: closes the stream; line streams:
// notifications/cancelled, SUB-09) and waits for its goroutine.
func (s *Subscription) Close() error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	return nil
}

// Listen opens a subscriptions/listen stream and waits for its
// acknowledgement (the first event). Several may be open at once (SUB-07).
func (c *Client) Listen(ctx context.Context, f Filter) (*Subscription, error) {
	if err := c.ensureEra(ctx); err != nil {
		return nil, err
	}
	if c.Era() != EraModern {
		return nil, fmt.Errorf("client: subscriptions/listen needs a 2026-07-28 server; this one is %s", c.Era())
	}
	s := &Subscription{c: c, filter: f, events: make(chan Event, 64), stop: make(chan struct{}), done: make(chan struct{})}
	ex, ack, err := s.open(ctx)
	if err != nil {
		return nil, err
	}
	s.events <- Event{Kind: EventAcknowledged, Ack: ack}
	go s.run(ex)
	return s, nil
}

// open sends one listen request and reads up to its acknowledgement.
func (s *Subscription) open(ctx context.Context) (Exchange, *Filter, error) {
	params, err := marshalParams(map[string]any{"notifications": s.filter})
	if err != nil {
		return nil, nil, err
	}
	for attempt := 0; ; attempt++ {
		out, err := s.c.build(ctx, "subscriptions/listen", params, nil, true)
		if err != nil {
			return nil, nil, err
		}
		ex, err := s.c.t.Open(ctx, out)
		if err != nil {
			if errors.Is(err, ErrNotDelivered) && attempt < s.c.opts.Retries && ctx.Err() == nil {
				continue
			}
			return nil, nil, err
		}
		s.id = out.ID
		msg, err := ex.Next(ctx)
		if err != nil {
			ex.Close()
			if err == io.EOF {
				err = ErrDropped
			}
			return nil, nil, err
		}
		var in incoming
		if err := in.parse(msg); err != nil {
			ex.Close()
			return nil, nil, fmt.Errorf("client: bad listen message: %w", err)
		}
		if in.isResponse() {
			ex.Close()
			if _, err := in.result(statusOf(ex)); err != nil {
				return nil, nil, err
			}
			return nil, nil, errors.New("client: listen stream completed before its acknowledgement")
		}
		if in.Method != "notifications/subscriptions/acknowledged" {
			ex.Close()
			return nil, nil, fmt.Errorf("client: listen stream began with %q, not its acknowledgement (SUB-03)", in.Method)
		}
		var ack struct {
			Notifications Filter `json:"notifications"`
		}
		_ = codec.Unmarshal(in.Params, &ack)
		return ex, &ack.Notifications, nil
	}
}

// run pumps the stream into Events, re-listening when it breaks.
func (s *Subscription) run(ex Exchange) {
	defer close(s.done)
	defer close(s.events)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-s.done:
		}
	}()
	backoff := 50 * time.Millisecond
	for {
		err := s.pump(ctx, ex)
		ex.Close()
		if err == nil || ctx.Err() != nil {
			return // completed by the server, or closed by us
		}
		if !relistenable(err) {
			s.err = err
			return
		}
		// SUB-10: a drop without the completion result: listen again.
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			var ack *Filter
			ex, ack, err = s.open(ctx)
			if err == nil {
				backoff = 50 * time.Millisecond
				if !s.send(ctx, Event{Kind: EventRelistened, Ack: ack}) {
					ex.Close()
					return
				}
				break
			}
			if ctx.Err() != nil {
				return
			}
			if !relistenable(err) {
				s.err = err
				return
			}
			s.c.opts.Logger.Debug("client: re-listen failed", "err", err)
			backoff = min(2*backoff, 5*time.Second)
		}
	}
}

func (s *Subscription) send(ctx context.Context, e Event) bool {
	select {
	case s.events <- e:
		return true
	case <-ctx.Done():
		return false
	}
}

// pump delivers one stream's notifications; nil means the server ended
// the subscription (its result, SUB-10, or its notifications/cancelled,
// SUB-11).
func (s *Subscription) pump(ctx context.Context, ex Exchange) error {
	for {
		msg, err := ex.Next(ctx)
		if err != nil {
			if err == io.EOF {
				return ErrDropped
			}
			return err
		}
		var in incoming
		if in.parse(msg) != nil {
			continue
		}
		if in.isResponse() {
			_, err := in.result(statusOf(ex))
			return err
		}
		switch in.Method {
		case "notifications/cancelled":
			return nil
		case "notifications/subscriptions/acknowledged":
			continue
		}
		e := Event{Kind: EventNotification, Method: in.Method, Params: in.Params}
		if in.Method == "notifications/resources/updated" {
			var p struct {
				URI string `json:"uri"`
			}
			_ = codec.Unmarshal(in.Params, &p)
			e.URI = p.URI
		}
		if !s.send(ctx, e) {
			return nil
		}
	}
}

// relistenable reports an end of stream after which listening again makes
// sense: the stream broke, never got through, or the server is briefly
// unable to serve it (HTTP 503: a replica that lost its backplane).
func relistenable(err error) bool {
	if errors.Is(err, ErrDropped) || errors.Is(err, ErrNotDelivered) {
		return true
	}
	var se *StatusError
	if errors.As(err, &se) && se.Status == 503 {
		return true
	}
	var re *RPCError
	return errors.As(err, &re) && re.Status == 503
}
