package engine

// Contexts derived from a Call (context.WithTimeout(c, …), or a library
// doing so with the Call it was given) must not outlive it. The context
// package watches a parent it does not know with a goroutine that, once
// the parent is done, reads the parent's Err and Value — possibly after
// the engine has recycled the Call, which crashed a replica whose state
// store derived a context per operation (issue 11). A Call therefore
// implements the context package's AfterFunc hook: derived contexts
// register a callback instead of starting a goroutine, the callbacks run
// when the call ends (cancelled, timed out or completed), after c.mu is
// released and before the Call is recycled, and the derived context's
// cancel unregisters its callback at once.

// afterFunc is one registered callback.
type afterFunc struct {
	id uint64
	f  func()
}

// AfterFunc arranges for f to run once the call is done (its Done channel
// closed), and returns a function that unregisters f: it reports whether
// it stopped f from running. It exists for the context package
// (contexts derived from the Call); f must be quick and must not block.
// If the call is already done, f runs at once in its own goroutine.
func (c *Call) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	if c.state != stateRunning {
		c.markAfters()
		c.afterWG.Add(1) // the Call is not recycled until f has run
		c.mu.Unlock()
		go func() {
			defer c.afterWG.Done()
			f()
		}()
		return func() bool { return false }
	}
	c.afterSeq++
	id, gen := c.afterSeq, c.gen
	c.afters = append(c.afters, afterFunc{id: id, f: f})
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.gen != gen {
			return false
		}
		for i, a := range c.afters {
			if a.id == id {
				c.afters = append(c.afters[:i], c.afters[i+1:]...)
				return true
			}
		}
		return false
	}
}

// takeAftersLocked hands the registered callbacks to the caller, which
// runs them with runAfters once c.mu is released. Called with c.mu held,
// where Done is closed.
func (c *Call) takeAftersLocked() []afterFunc {
	if len(c.afters) == 0 { // inlined: most requests have none
		return nil
	}
	return c.takeAfters()
}

// takeAfters is takeAftersLocked's work, out of line so that the check
// inlines.
//
//go:noinline
func (c *Call) takeAfters() []afterFunc {
	a := c.afters
	c.afters = nil
	c.markAfters()
	c.afterWG.Add(1)
	return a
}

// markAfters notes, once in the Call's life, that callbacks of derived
// contexts have run on it or are running (afterWG has been added to), so
// that the request's end (complete, after its locked section) waits for
// them; a Call that never had one skips the wait (a call). Called with
// c.mu held, just before afterWG.Add: the end, which runs after complete
// has taken c.mu, sees it, and an end that reads it
// while the count goes up (AfterFunc on a done Call) never sees the
// count up with the flag still clear.
func (c *Call) markAfters() {
	if !c.afterUsed.Load() {
		c.afterUsed.Store(true)
	}
}

func (c *Call) runAfters(a []afterFunc) {
	if len(a) != 0 { // inlined: most requests have none
		c.runTaken(a)
	}
}

func (c *Call) runTaken(a []afterFunc) {
	defer c.afterWG.Done()
	for _, x := range a {
		x.f()
	}
}
