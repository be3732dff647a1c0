package legacy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/framing"
	"github.com/mcpwire/mcpwire/state"
)

// stdio: a connection whose first message is initialize speaks 2025-11-25
// for its whole life (transport/stdio's Options.Upgrade hook calls
// StdioUpgrade). The connection is the session: no Mcp-Session-Id, no
// store record; change notifications for it (list_changed, and
// resources/updated after resources/subscribe) are written on the
// connection, server→client requests too, and the client's responses are
// read from it.

// ErrLineTooLong ends a line connection whose client sent a message over
// Config.MaxLine (counted in Stats.TooLarge).
var ErrLineTooLong = framing.ErrLineTooLong

// StdioUpgrade is the hook for transport/stdio (Options.Upgrade): for a
// connection whose first message is an initialize request it returns the
// function that serves the connection (ServeLines, under Config.MaxLine);
// otherwise nil, and the connection stays modern (an initialize without
// the option gets today's -32022). The first line itself was read under
// the stdio Options.MaxLine, so give both the same value.
func (s *Server) StdioUpgrade(first []byte) func(ctx context.Context, in io.Reader, out io.Writer) error {
	m, err := parse(first)
	if err != nil || m.Method != "initialize" || len(m.ID) == 0 {
		return nil
	}
	return s.ServeLines
}

// lineOut writes whole lines, one writer at a time.
type lineOut struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (o *lineOut) write(frame []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	b := make([]byte, 0, len(frame)+1)
	b = append(append(b, frame...), '\n')
	_, o.err = o.w.Write(b)
	return o.err
}

func (o *lineOut) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// lineSink is one request's sink on a line connection.
type lineSink struct{ o *lineOut }

func (l lineSink) event(frame []byte) error        { return l.o.write(frame) }
func (l lineSink) comment() error                  { return nil }
func (l lineSink) final(frame []byte)              { _ = l.o.write(frame) }
func (l lineSink) finalStatus(frame []byte, _ int) { _ = l.o.write(frame) }

// ServeLines serves one 2025-11-25 line-framed connection (stdio): the
// first message must be initialize. It returns when in ends (after the
// requests in flight have finished, within a grace of 2 s), or when ctx
// ends; a line over Config.MaxLine ends it with ErrLineTooLong.
func (s *Server) ServeLines(ctx context.Context, in io.Reader, out io.Writer) error {
	o := &lineOut{w: out}
	sc := bufio.NewScanner(in)
	// The scanner's bound counts the CR and LF that MaxLine does not, and
	// never goes below its first buffer; the check in the loop applies
	// MaxLine exactly.
	sc.Buffer(make([]byte, 0, 64<<10), s.cfg.MaxLine+min(2, math.MaxInt-s.cfg.MaxLine))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ss *session
	var wg sync.WaitGroup
	defer func() {
		if ss != nil {
			s.closeLocal(ss, &wg)
		} else {
			wg.Wait()
		}
	}()
	for sc.Scan() {
		if err := o.failed(); err != nil {
			return err // the client closed our output
		}
		line := sc.Bytes()
		if len(line) > s.cfg.MaxLine { // the scanner's token has no CR or LF
			return s.lineTooLong()
		}
		if len(line) == 0 {
			continue
		}
		m, perr := parse(line)
		if perr != nil {
			_ = o.write(encodeError(nil, perr))
			continue
		}
		if ss == nil {
			if m.Method != "initialize" || len(m.ID) == 0 {
				_ = o.write(encodeError(m.ID, codec.NewError(codec.CodeInvalidRequest, "Invalid Request: initialize first")))
				continue
			}
			var err error
			if ss, err = s.initLocal(ctx, m, o, &wg); err != nil {
				return err
			}
			continue
		}
		switch {
		case m.Method == "" && len(m.ID) > 0:
			s.deliver(ss, m)
		case m.Method == "":
		case len(m.ID) == 0:
			s.notification(ss, m)
		default:
			s.stats.Requests.Add(1)
			if frame, _ := s.sessionMethod(ctx, ss, m); frame != nil {
				_ = o.write(frame)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.run(ctx, lineSink{o}, ss, m, nil, "")
			}()
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil && !errors.Is(err, io.EOF) {
		if errors.Is(err, bufio.ErrTooLong) {
			return s.lineTooLong()
		}
		return err
	}
	return nil
}

// lineTooLong counts a line over Config.MaxLine; the connection then ends.
func (s *Server) lineTooLong() error {
	s.stats.BadRequests.Add(1)
	s.stats.TooLarge.Add(1)
	s.log.Warn("legacy line connection: a message over the line limit; closing", "limit", s.cfg.MaxLine)
	return ErrLineTooLong
}

// initLocal answers the initialize of a line connection and starts its
// notification writer.
func (s *Server) initLocal(ctx context.Context, m *wire, o *lineOut, wg *sync.WaitGroup) (*session, error) {
	var p initParams
	_ = codec.Unmarshal(m.Params, &p)
	rec := p.record()
	res, err := s.initResult(ctx, rec.Version)
	if err != nil {
		return nil, err
	}
	ss := &session{s: s, id: "stdio", local: true, rec: rec, touched: time.Now()}
	s.stats.Created.Add(1)
	if err := o.write(encodeResponse(m.ID, res)); err != nil {
		return nil, err
	}
	g := &getStream{ss: ss, wake: make(chan struct{}, 1)}
	ss.stream = g
	s.listen(g)
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.pumpLines(ctx, g, o)
	}()
	return ss, nil
}

// pumpLines writes the connection's change notifications.
func (s *Server) pumpLines(ctx context.Context, g *getStream, o *lineOut) {
	defer g.stopListen()
	for {
		q, slow, end := g.take()
		if slow {
			s.stats.SlowConsumers.Add(1)
			return
		}
		for _, f := range q {
			if o.write(f) != nil {
				return
			}
		}
		if end {
			return
		}
		select {
		case <-g.wake:
		case <-ctx.Done():
			return
		case <-s.stop:
			return
		}
	}
}

// closeLocal ends a line connection's session: requests in flight get 2 s
// to finish, then are cancelled.
func (s *Server) closeLocal(ss *session, wg *sync.WaitGroup) {
	ss.endStream()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(2 * time.Second):
	}
	for _, ref := range ss.markGone() {
		ref.Cancel(errSessionEnded)
	}
	<-done
}

// sessionMethod answers the methods the session itself serves (ping,
// logging/setLevel, resources/subscribe and unsubscribe, a second
// initialize), with the HTTP status; nil for the rest.
func (s *Server) sessionMethod(ctx context.Context, ss *session, m *wire) ([]byte, int) {
	switch m.Method {
	case "ping":
		return encodeResponse(m.ID, json.RawMessage(`{}`)), 200
	case "logging/setLevel":
		lvl, ok := codec.LookupString(m.Params, "level")
		if !ok || !knownLevel(lvl.String()) {
			return encodeError(m.ID, codec.NewError(codec.CodeInvalidParams, "Invalid params: unknown level")), 200
		}
		return s.updateFrame(ctx, ss, m.ID, func(r *record) { r.Level = lvl.String() }, false)
	case "resources/subscribe", "resources/unsubscribe":
		uri, ok := codec.LookupString(m.Params, "uri")
		if !ok || uri.String() == "" {
			return encodeError(m.ID, codec.NewError(codec.CodeInvalidParams, "Invalid params: params.uri must be a string")), 200
		}
		u, sub := uri.String(), m.Method == "resources/subscribe"
		return s.updateFrame(ctx, ss, m.ID, func(r *record) {
			r.Subs = slices.DeleteFunc(r.Subs, func(x string) bool { return x == u })
			if sub {
				r.Subs = append(r.Subs, u)
			}
		}, true)
	case "initialize":
		return encodeError(m.ID, codec.NewError(codec.CodeInvalidRequest, "Invalid Request: the session is already initialized")), 200
	}
	return nil, 0
}

// updateFrame changes the session record and returns the answer: 404 when
// the session is gone meanwhile, 503 when the store cannot be reached.
func (s *Server) updateFrame(ctx context.Context, ss *session, id json.RawMessage, fn func(*record), relisten bool) ([]byte, int) {
	if err := ss.update(ctx, fn); err != nil {
		if errors.Is(err, state.ErrNotFound) {
			s.stats.UnknownSession.Add(1)
			return encodeError(nil, codec.NewError(-32001, "Session not found")), 404
		}
		s.stats.Unavailable.Add(1)
		return encodeError(id, storeError(err)), 503
	}
	if relisten {
		ss.relisten()
		if !ss.local {
			// The session's GET stream may be held by another replica:
			// tell it (stream.go). A failed publish is the engine's to
			// handle (it ends the streams that may have missed it).
			_ = s.eng.ResourceUpdated(cueURI(ss.id))
		}
	}
	return encodeResponse(id, json.RawMessage(`{}`)), 200
}
