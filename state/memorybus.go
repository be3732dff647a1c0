package state

import (
	"context"
	"sync"
)

// memSub is one Subscribe on a Memory: a bounded queue drained by its own
// goroutine, so that Publish never waits for a subscriber.
type memSub struct {
	m              *Memory
	deliver        func(Cue)
	lost, restored func()
	wake           chan struct{} // cap 1

	mu       sync.Mutex
	q        []Cue // ring of QueueLen
	head, n  int
	overflow bool // the queue filled: cues are dropped until it drains
	told     bool // lost was called for this overflow
}

// Publish implements Backplane: the cue is queued for every subscriber of
// this Memory and Publish returns without waiting for any of them. A
// subscriber whose queue is full misses it (see MemoryConfig.QueueLen).
func (m *Memory) Publish(ctx context.Context, c Cue) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.subMu.Lock()
	if m.closed {
		m.subMu.Unlock()
		return errMemoryClosed
	}
	for s := range m.subs {
		s.push(c)
	}
	m.subMu.Unlock()
	m.stats.Published.Add(1)
	return nil
}

func (s *memSub) push(c Cue) {
	s.mu.Lock()
	switch {
	case s.overflow:
		s.m.stats.Dropped.Add(1)
	case s.n == len(s.q):
		s.overflow = true
		s.m.stats.Dropped.Add(1)
	default:
		s.q[(s.head+s.n)%len(s.q)] = c
		s.n++
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Subscribe implements Backplane. The subscription is active when it
// returns and lasts until ctx ends or the Memory is closed. deliver, lost
// and restored are called from one goroutine per subscription; lost is
// called when the subscriber fell QueueLen cues behind, restored once the
// cues queued before that are delivered. lost and restored may be nil.
func (m *Memory) Subscribe(ctx context.Context, deliver func(Cue), lost, restored func()) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s := &memSub{m: m, deliver: deliver, lost: lost, restored: restored,
		wake: make(chan struct{}, 1), q: make([]Cue, m.opt.QueueLen)}
	m.subMu.Lock()
	if m.closed {
		m.subMu.Unlock()
		return errMemoryClosed
	}
	m.subs[s] = struct{}{}
	m.wg.Add(1)
	m.subMu.Unlock()
	go s.run(ctx)
	return nil
}

func (s *memSub) run(ctx context.Context) {
	defer s.m.wg.Done()
	defer func() {
		s.m.subMu.Lock()
		delete(s.m.subs, s)
		s.m.subMu.Unlock()
	}()
	for {
		if ctx.Err() != nil || s.m.isClosed() {
			return
		}
		s.mu.Lock()
		switch {
		case s.overflow && !s.told:
			s.told = true
			s.mu.Unlock()
			s.m.stats.Lost.Add(1)
			if s.lost != nil {
				s.lost()
			}
		case s.n > 0:
			c := s.q[s.head]
			s.q[s.head] = Cue{}
			s.head = (s.head + 1) % len(s.q)
			s.n--
			s.mu.Unlock()
			s.deliver(c)
		case s.told:
			s.overflow, s.told = false, false
			s.mu.Unlock()
			if s.restored != nil {
				s.restored()
			}
		default:
			s.mu.Unlock()
			select {
			case <-s.wake:
			case <-ctx.Done():
			case <-s.m.done:
			}
		}
	}
}
