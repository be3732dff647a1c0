package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/state"
)

// record is what the store keeps for a session: everything a replica needs
// to serve it. The session id is the record's state handle (128 random
// bits, bound to the principal that initialized it).
type record struct {
	Version string          `json:"v"`
	Caps    json.RawMessage `json:"caps,omitempty"`
	Info    json.RawMessage `json:"info,omitempty"`
	Level   string          `json:"level,omitempty"`
	Subs    []string        `json:"subs,omitempty"`
}

// session is this process's view of one session.
type session struct {
	s         *Server
	id        string
	principal string

	mu      sync.Mutex
	rec     record
	ver     uint64    // store version of rec
	touched time.Time // last use seen here
	synced  time.Time // last expiry refresh in the store
	stream  *getStream
	// calls holds the calls in flight, by the client's request id. A key
	// may alias the id's bytes in a fasthttp request body (serveFast): it
	// is removed before that handler returns, or moved to a copy
	// (keepKey). Never copy a key out of it or keep it.
	calls   inflight
	pending map[string]chan json.RawMessage
	gone    bool
	local   bool       // a stdio connection's session: not in the store
	head    *metaBlock // encoded _meta members for ver (metaHead)
	headVer uint64
	// The store read rec and ver came from, when the store is a
	// state.Memory (Server.gens): gen was read before it and exp is the
	// record's expiry then (unix ns, 0: none). While the store's
	// generation is still gen and exp has not passed, a read would
	// return the same record, so lookupIn skips it. genOK false: read.
	gen   uint64
	genOK bool
	exp   int64

	// The per-caller counts this session holds (create): "" for none.
	owner, ip string
}

// principalOf names the caller for the store: the authenticated principal
// when there is one (its string form, which must identify it). A principal
// without an identity (a typed nil, or an empty string form) is anonymous,
// "legacy": were it "legacy:", every such caller would be one principal,
// sharing sessions and MaxSessionsPerPrincipal.
func principalOf(p any) string {
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return anonymous
	}
	id := ""
	switch v := p.(type) {
	case nil:
	case string:
		id = v
	case interface{ String() string }:
		id = v.String()
	default:
		id = fmt.Sprintf("%T:%v", p, p)
	}
	if id == "" {
		return anonymous
	}
	return "legacy:" + id
}

// anonymous is principalOf of a caller without an identity.
const anonymous = "legacy"

// ownerOf is the caller MaxSessionsPerPrincipal counts: principalOf, or
// "" for an anonymous one.
func ownerOf(p any) string {
	if k := principalOf(p); k != anonymous {
		return k
	}
	return ""
}

var (
	errTooMany             = errors.New("legacy: too many sessions")
	errTooManyForPrincipal = errors.New("legacy: too many sessions for this principal")
	errTooManyForIP        = errors.New("legacy: too many sessions for this client IP")
)

// admitLocked checks the process bound and the caller's (owner: the
// authenticated principal, "" for an anonymous caller; ip: "" for none),
// counting a refusal.
func (s *Server) admitLocked(owner, ip string) error {
	switch {
	case len(s.sessions) >= s.cfg.MaxSessions:
		s.stats.Refused.Add(1)
		return errTooMany
	case owner != "" && s.perPrincipal[owner] >= s.cfg.MaxSessionsPerPrincipal:
		s.stats.RefusedPerPrincipal.Add(1)
		return errTooManyForPrincipal
	case ip != "" && s.perIP[ip] >= s.cfg.MaxSessionsPerIP:
		s.stats.RefusedPerIP.Add(1)
		return errTooManyForIP
	}
	return nil
}

// create stores a new session for principal (its store key, principalOf)
// and holds it here, charged to owner and ip (see admitLocked).
func (s *Server) create(ctx context.Context, principal, owner, ip string, rec record) (*session, error) {
	s.mu.Lock()
	err := s.admitLocked(owner, ip)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	val, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	h, err := s.store.Create(ctx, principal, val, s.cfg.IdleTimeout)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	ss := &session{s: s, id: string(h), principal: principal, rec: rec, ver: 1, touched: now, synced: now, owner: owner, ip: ip}
	s.mu.Lock()
	if err := s.admitLocked(owner, ip); err != nil {
		s.mu.Unlock()
		_ = s.store.Delete(ctx, principal, h)
		return nil, err
	}
	s.sessions[ss.id] = ss
	if owner != "" {
		s.perPrincipal[owner]++
	}
	if ip != "" {
		s.perIP[ip]++
	}
	s.mu.Unlock()
	s.stats.Sessions.Add(1)
	s.stats.Created.Add(1)
	return ss, nil
}

// lookup finds a live session for principal. The store is asked every
// time (another replica may have ended the session or changed its log
// level or subscriptions), unless it can tell that the record has not
// changed since this process last read it (the in-process state.Memory:
// its Generation); its expiry is pushed forward at most every
// quarter of IdleTimeout. state.ErrNotFound for an unknown, expired or
// foreign session.
func (s *Server) lookup(ctx context.Context, principal, id string) (*session, error) {
	if !state.Handle(id).Valid() {
		return nil, state.ErrNotFound
	}
	s.mu.RLock()
	ss := s.sessions[id]
	s.mu.RUnlock()
	if ss != nil && ss.principal != principal {
		return nil, state.ErrNotFound
	}
	ss, _, err := s.lookupIn(ctx, principal, id, ss)
	return ss, err
}

// lookupIn is lookup once this process's session for id is found (ss),
// or found missing (nil). head is the session's encoded _meta members
// (metaHead) when they were at hand for the record read, else nil.
func (s *Server) lookupIn(ctx context.Context, principal, id string, ss *session) (_ *session, head *metaBlock, _ error) {
	var gen uint64
	if s.gens != nil {
		// Read before the store is (below, or by the read ss.gen came
		// from): a write after it moves the generation past gen.
		gen = s.gens.Generation(state.Handle(id))
		if ss != nil {
			now := time.Now()
			ss.mu.Lock()
			if ss.genOK && ss.gen == gen && (ss.exp == 0 || now.UnixNano() < ss.exp) {
				// Nothing was written to the store since this process
				// read the record, and it has not expired: a read
				// would return the record at ss.ver again.
				return s.unchanged(ctx, ss, now)
			}
			ss.mu.Unlock()
		}
	}
	r, err := s.store.Get(ctx, principal, state.Handle(id))
	if err != nil {
		if ss != nil && errors.Is(err, state.ErrNotFound) {
			s.forget(ss)
		}
		return nil, nil, err
	}
	if ss != nil {
		// The common case: the record has not moved since this process
		// last read it, so nothing is decoded and one lock does it all.
		now := time.Now()
		ss.mu.Lock()
		if ss.ver == r.Version {
			ss.gen, ss.genOK, ss.exp = gen, s.gens != nil, unixNano(r.Expires)
			return s.unchanged(ctx, ss, now)
		}
		ss.mu.Unlock()
	}
	var rec record
	if ss != nil && ss.version() == r.Version {
		rec = ss.snapshot() // unchanged since this process last read it: not decoded again
	} else {
		dec := new(record) // only here on the heap
		if err := json.Unmarshal(r.Value, dec); err != nil {
			return nil, nil, state.ErrNotFound
		}
		rec = *dec
	}
	now := time.Now()
	if ss == nil {
		ss = &session{s: s, id: id, principal: principal, rec: rec, ver: r.Version, touched: now}
		s.mu.Lock()
		if old := s.sessions[id]; old != nil {
			ss = old
		} else {
			s.sessions[id] = ss
			s.stats.Sessions.Add(1)
		}
		s.mu.Unlock()
	}
	ss.mu.Lock()
	// Idle here, and nobody refreshed it elsewhere since: expired.
	if now.Sub(ss.touched) >= s.cfg.IdleTimeout && r.Version == ss.ver {
		ss.mu.Unlock()
		s.expire(ss)
		return nil, nil, state.ErrNotFound
	}
	changed := !slices.Equal(rec.Subs, ss.rec.Subs)
	ss.rec, ss.ver, ss.touched = rec, r.Version, now
	ss.gen, ss.genOK, ss.exp = gen, s.gens != nil, unixNano(r.Expires)
	refresh := now.Sub(ss.synced) >= s.cfg.IdleTimeout/4
	ss.mu.Unlock()
	if changed {
		ss.relisten()
	}
	if refresh {
		if err := ss.refresh(ctx); err != nil {
			return nil, nil, err
		}
	}
	return ss, nil, nil
}

// unchanged is lookupIn for a record the store holds at ss.ver, the
// version this process last read (ss.mu held; unlocked here): the idle
// check, the touch and, when due, the expiry refresh.
func (s *Server) unchanged(ctx context.Context, ss *session, now time.Time) (_ *session, head *metaBlock, _ error) {
	if now.Sub(ss.touched) >= s.cfg.IdleTimeout { // idle here, and nobody refreshed it elsewhere since
		ss.mu.Unlock()
		s.expire(ss)
		return nil, nil, state.ErrNotFound
	}
	ss.touched = now
	refresh := now.Sub(ss.synced) >= s.cfg.IdleTimeout/4
	if ss.headVer == ss.ver && !refresh {
		head = ss.head
	}
	ss.mu.Unlock()
	if refresh {
		if err := ss.refresh(ctx); err != nil {
			return nil, nil, err
		}
	}
	return ss, head, nil
}

// unixNano is t in unix nanoseconds, 0 for the zero time (no expiry).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// refresh re-reads the record and pushes its expiry forward (the store
// expires it IdleTimeout after the last refresh).
func (ss *session) refresh(ctx context.Context) error {
	s := ss.s
	if ss.local {
		return nil
	}
	r, err := s.store.Get(ctx, ss.principal, state.Handle(ss.id))
	if err != nil {
		if errors.Is(err, state.ErrNotFound) {
			s.forget(ss)
		}
		return err
	}
	var rec record
	if err := json.Unmarshal(r.Value, &rec); err != nil {
		return state.ErrNotFound
	}
	v, err := s.store.CompareAndSet(ctx, ss.principal, state.Handle(ss.id), r.Version, r.Value, s.cfg.IdleTimeout)
	if err != nil && !errors.Is(err, state.ErrConflict) {
		return err
	}
	ss.mu.Lock()
	changed := !slices.Equal(rec.Subs, ss.rec.Subs)
	ss.rec = rec
	if err == nil {
		ss.ver = v
	} else {
		ss.ver = r.Version
	}
	ss.synced = time.Now()
	ss.genOK = false // the next lookup reads the store
	ss.mu.Unlock()
	if changed {
		ss.relisten()
	}
	return nil
}

// update changes the record with fn, retrying on conflicts with other
// replicas.
func (ss *session) update(ctx context.Context, fn func(*record)) error {
	s := ss.s
	if ss.local {
		ss.mu.Lock()
		fn(&ss.rec)
		ss.ver++
		ss.mu.Unlock()
		return nil
	}
	for range 8 {
		r, err := s.store.Get(ctx, ss.principal, state.Handle(ss.id))
		if err != nil {
			return err
		}
		var rec record
		if err := json.Unmarshal(r.Value, &rec); err != nil {
			return state.ErrNotFound
		}
		fn(&rec)
		val, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		v, err := s.store.CompareAndSet(ctx, ss.principal, state.Handle(ss.id), r.Version, val, s.cfg.IdleTimeout)
		if errors.Is(err, state.ErrConflict) {
			continue
		}
		if err != nil {
			return err
		}
		ss.mu.Lock()
		ss.rec, ss.ver, ss.synced = rec, v, time.Now()
		ss.genOK = false // the next lookup reads the store
		ss.mu.Unlock()
		return nil
	}
	return state.ErrConflict
}

func (ss *session) version() uint64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.ver
}

// markGone marks the session ended, releases the waits for answers to
// its server→client requests and returns its calls in flight, as
// references for the caller to cancel outside ss.mu (a call goes back to
// its pool once it has ended, so only a RequestRef stays safe to use).
func (ss *session) markGone() []engine.RequestRef {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.gone = true
	calls := make([]engine.RequestRef, 0, ss.calls.len())
	if ss.calls.one != nil {
		calls = append(calls, ss.calls.one.claim(errSessionEnded))
	}
	for _, c := range ss.calls.more {
		calls = append(calls, c.claim(errSessionEnded))
	}
	for k, ch := range ss.pending {
		close(ch)
		delete(ss.pending, k)
	}
	return calls
}

func (ss *session) snapshot() record {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.rec
}

// forget drops the session from this process (its record may live on in a
// shared store) and ends what it holds here.
func (s *Server) forget(ss *session) bool {
	s.mu.Lock()
	held := s.sessions[ss.id] == ss
	if held {
		delete(s.sessions, ss.id)
		uncount(s.perPrincipal, ss.owner)
		uncount(s.perIP, ss.ip)
	}
	s.mu.Unlock()
	if !held {
		return false
	}
	s.stats.Sessions.Add(-1)
	for _, ref := range ss.markGone() {
		ref.Cancel(errSessionEnded)
	}
	ss.endStream()
	return true
}

var errSessionEnded = errors.New("legacy: session ended")

// uncount takes one from m[k] (nothing for k ""), dropping the entry at 0.
func uncount(m map[string]int, k string) {
	if k == "" {
		return
	}
	if n := m[k] - 1; n > 0 {
		m[k] = n
	} else {
		delete(m, k)
	}
}

// expire ends an idle session here and in the store.
func (s *Server) expire(ss *session) {
	if s.forget(ss) {
		s.stats.Expired.Add(1)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = s.store.Delete(ctx, ss.principal, state.Handle(ss.id))
		cancel()
	}
}

// expireIfUnused expires a session idle here unless another replica has
// used it since this one last saw it (its record's version moved).
func (s *Server) expireIfUnused(ss *session) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r, err := s.store.Get(ctx, ss.principal, state.Handle(ss.id))
	ss.mu.Lock()
	unused := err != nil || r.Version == ss.ver
	ss.mu.Unlock()
	if unused {
		s.expire(ss)
	} else {
		s.forget(ss) // in use elsewhere: only this process lets go
	}
}

// end is DELETE: the session is gone everywhere.
func (s *Server) end(ctx context.Context, ss *session) error {
	s.forget(ss)
	s.stats.Deleted.Add(1)
	return s.store.Delete(ctx, ss.principal, state.Handle(ss.id))
}

// sweepLoop expires idle sessions held here.
func (s *Server) sweepLoop() {
	defer s.wg.Done()
	every := s.cfg.IdleTimeout / 4
	if every > time.Minute {
		every = time.Minute
	}
	if every < 10*time.Millisecond {
		every = 10 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			s.mu.Lock()
			var idle []*session
			for _, ss := range s.sessions {
				ss.mu.Lock()
				if now.Sub(ss.touched) >= s.cfg.IdleTimeout && ss.stream == nil && ss.calls.len() == 0 {
					idle = append(idle, ss)
				}
				ss.mu.Unlock()
			}
			s.mu.Unlock()
			for _, ss := range idle {
				s.expireIfUnused(ss)
			}
		}
	}
}

// touch marks use by a long-lived stream or call.
func (ss *session) touch() {
	ss.mu.Lock()
	ss.touched = time.Now()
	ss.mu.Unlock()
}

// initParams is what an initialize's params carry for the session.
type initParams struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      json.RawMessage `json:"clientInfo"`
}

// record is the session an initialize opens: the client's version when it
// is one of Versions (else ProtocolVersion), its capabilities ({} when not
// an object) and its clientInfo when it is an object.
func (p initParams) record() record {
	rec := record{Version: ProtocolVersion, Caps: p.Capabilities}
	if slices.Contains(Versions, p.ProtocolVersion) {
		rec.Version = p.ProtocolVersion
	}
	if len(rec.Caps) == 0 || rec.Caps[0] != '{' {
		rec.Caps = json.RawMessage(`{}`)
	}
	if len(p.ClientInfo) > 0 && p.ClientInfo[0] == '{' {
		rec.Info = p.ClientInfo
	}
	return rec
}

// meta builds the 2026-07-28 _meta of a request run for this session.
func (ss *session) meta(into map[string]json.RawMessage) {
	rec := ss.snapshot()
	into[codec.MetaProtocolVersion] = quote(ss.s.modern)
	caps := rec.Caps
	if len(caps) == 0 || caps[0] != '{' {
		caps = json.RawMessage(`{}`)
	}
	into[codec.MetaClientCapabilities] = caps
	if len(rec.Info) > 0 && rec.Info[0] == '{' {
		into[codec.MetaClientInfo] = rec.Info
	}
	if rec.Level != "" && ss.s.eng.Config().Logging {
		into[codec.MetaLogLevel] = quote(rec.Level)
	}
}

func quote(s string) json.RawMessage { return codec.AppendString(nil, s) }

// hasCap reports whether the session's client declared capability name.
func (ss *session) hasCap(name string) bool {
	rec := ss.snapshot()
	_, ok := codec.LookupPath(rec.Caps, name)
	return ok
}
