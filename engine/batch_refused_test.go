package engine

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// countingReplier counts the answers per request id (the ids are the
// decimal numbers batchMsg is given).
type countingReplier struct {
	mu  sync.Mutex
	got map[string]int
}

func (r *countingReplier) Notify(*Request, []byte) error { return nil }
func (r *countingReplier) Done(*Request)                 {}
func (r *countingReplier) Reply(q *Request, _ []byte, _ int) error {
	r.mu.Lock()
	r.got[string(q.Envelope().ID)]++
	r.mu.Unlock()
	return nil
}

// TestBatchRefusedKeepsAnswer (RELIABILITY C13): Batch.admit stores a
// request's admission mark, then reads the shutdown flags. A cancel pass
// (tracker.refs, then Abort) that reads the mark between the two cancels
// a request that admit then refuses: its handler never runs, and its
// "shutting down" answer must still be sent, once. Batches run on two
// goroutines while the scope closes and passes run for 2 ms: a request
// whose handler never ran is answered exactly once, and none twice.
// The window is a few instructions wide: without -race the test loses
// an answer in about one run of four, under -race in every run.
func TestBatchRefusedKeepsAnswer(t *testing.T) {
	lost, twice, refused := 0, 0, uint64(0)
	for round := 0; round < 200; round++ {
		s := New(Config{})
		var ran sync.Map // ids whose handler ran
		_ = s.AddTool(Tool{Name: "probe", Inline: true, Handler: func(c *Call) error {
			ran.Store(string(c.ID()), true)
			c.Text("ok")
			return nil
		}})
		sc := NewScope(s, "tcp")
		rep := &countingReplier{got: map[string]int{}}
		var next atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					b := sc.StartBatch()
					for k := 0; k < 8; k++ {
						pre := b.Prepare()
						msg := batchMsg(strconv.FormatInt(next.Add(1), 10), "probe")
						if err := codec.Peek(msg, pre.Envelope()); err != nil {
							panic(err)
						}
						r := sc.BeginInBatch(pre, b, context.Background(), msg, rep, nil)
						if e := r.Check(); e != nil {
							r.Fail(e)
							continue
						}
						r.Start()
					}
					b.End()
				}
			}()
		}
		time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
		s.tracker.closeScope(sc)
		for until := time.Now().Add(2 * time.Millisecond); time.Now().Before(until); {
			for _, r := range s.tracker.refs(sc) {
				r.Abort(errShutdown)
			}
		}
		close(stop)
		wg.Wait()
		refused += s.stats.ShutdownRefused.Load()
		rep.mu.Lock()
		for i := int64(1); i <= next.Load(); i++ {
			id := strconv.FormatInt(i, 10)
			_, handled := ran.Load(id)
			switch rep.got[id] {
			case 0:
				if !handled { // a pass may cancel a request that ran
					lost++
				}
			case 1:
			default:
				twice++
			}
		}
		rep.mu.Unlock()
		shutdownSoon(s)
	}
	if refused == 0 {
		t.Fatal("no request was refused: the test did not reach admit's refusal")
	}
	if lost != 0 || twice != 0 {
		t.Errorf("%d requests refused; %d whose handler never ran got no answer, %d got more than one", refused, lost, twice)
	}
}
