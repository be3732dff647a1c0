package engine

import (
	"sync"
	"time"
)

// workerIdle is how long an idle worker is kept before it exits.
const workerIdle = 10 * time.Second

// workerPool runs handlers on reused goroutines, so that dispatching a
// request neither allocates a goroutine closure nor arms a timer. Idle
// workers wait on their own channel and sit on a LIFO stack (the most
// recently used worker, whose stack is warm, runs next); handing over a call
// is one mutex and one channel send. When no worker is idle a new one is
// started: the number of workers is bounded by the calls in flight, which
// the transports bound. A janitor stops workers idle for workerIdle.
type workerPool struct {
	mu      sync.Mutex
	idle    []*worker
	stopped bool
	quit    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
	janitor bool
}

type worker struct {
	ch       chan *Call // nil Call: exit
	lastUsed time.Time
}

func (p *workerPool) init() {
	p.quit = make(chan struct{})
}

func (p *workerPool) submit(c *Call) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 && !p.stopped {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.ch <- c
		return
	}
	if !p.janitor && !p.stopped {
		p.janitor = true
		p.wg.Add(1)
		go p.clean()
	}
	p.mu.Unlock()
	p.wg.Add(1)
	go p.run(&worker{ch: make(chan *Call, 1)}, c)
}

func (p *workerPool) run(w *worker, c *Call) {
	defer p.wg.Done()
	for c != nil {
		c.run()
		w.lastUsed = time.Now()
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			return
		}
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		c = <-w.ch
	}
}

// clean stops workers that stayed idle for workerIdle. The stack is LIFO,
// so the longest-idle workers are at the bottom.
func (p *workerPool) clean() {
	defer p.wg.Done()
	t := time.NewTicker(workerIdle / 2)
	defer t.Stop()
	for {
		select {
		case <-p.quit:
			return
		case now := <-t.C:
			p.mu.Lock()
			n := 0
			for n < len(p.idle) && now.Sub(p.idle[n].lastUsed) > workerIdle {
				p.idle[n].ch <- nil
				n++
			}
			if n > 0 {
				p.idle = append(p.idle[:0], p.idle[n:]...)
			}
			p.mu.Unlock()
		}
	}
}

// stop makes idle workers exit; busy ones exit when their handler returns.
func (p *workerPool) stop() {
	p.once.Do(func() {
		p.mu.Lock()
		p.stopped = true
		for _, w := range p.idle {
			w.ch <- nil
		}
		p.idle = nil
		p.mu.Unlock()
		close(p.quit)
	})
}
