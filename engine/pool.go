package engine

import (
	"sync"
	"time"
)

// workerIdle is how long an idle worker waits for work before it exits.
const workerIdle = 10 * time.Second

// workerPool runs handlers on reused goroutines, so that dispatching a
// request does not allocate a goroutine closure. Handing a call to an idle
// worker is one unbuffered channel send; when no worker is idle a new one is
// started. The number of workers is bounded by the calls in flight, which
// the transports bound.
type workerPool struct {
	work chan *Call
	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func (p *workerPool) init() {
	p.work = make(chan *Call)
	p.quit = make(chan struct{})
}

func (p *workerPool) submit(c *Call) {
	select {
	case p.work <- c:
	default:
		p.wg.Add(1)
		go p.worker(c)
	}
}

func (p *workerPool) worker(c *Call) {
	defer p.wg.Done()
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for {
		c.run()
		t.Reset(workerIdle)
		select {
		case c = <-p.work:
		case <-t.C:
			return
		case <-p.quit:
			return
		}
	}
}

// stop makes idle workers exit; busy ones exit when their handler returns.
func (p *workerPool) stop() { p.once.Do(func() { close(p.quit) }) }
