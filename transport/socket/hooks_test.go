package socket

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// TestHooks: each TCP and Unix connection is reported to the engine's
// hooks (ConnStart, ConnEnd), its calls name it (Call.Conn,
// Call.Transport), and a peer that goes away ends its calls as a
// disconnect.
func TestHooks(t *testing.T) {
	for _, network := range networks {
		t.Run(network, func(t *testing.T) {
			var mu sync.Mutex
			var events []string
			ended := make(chan engine.Outcome, 4)
			eng := engine.New(engine.Config{Hooks: engine.Hooks{
				ConnStart: func(ci *engine.ConnInfo) {
					mu.Lock()
					events = append(events, "start "+ci.Transport)
					mu.Unlock()
				},
				ConnEnd: func(ci *engine.ConnInfo, err error) {
					mu.Lock()
					events = append(events, "end "+ci.Transport)
					mu.Unlock()
				},
				CallEnd: func(c *engine.Call, o engine.Outcome) {
					if c.Name() == "wait" {
						ended <- o
					}
				},
			}})
			started := make(chan struct{}, 1)
			_ = eng.AddTool(engine.Tool{Name: "where", Handler: func(c *engine.Call) error {
				c.Text(fmt.Sprintf("%s %v", c.Transport(), c.Conn() != nil && c.Conn().LocalAddr != ""))
				return nil
			}})
			_ = eng.AddTool(engine.Tool{Name: "wait", Handler: func(c *engine.Call) error {
				started <- struct{}{}
				<-c.Done()
				return nil
			}})
			f := start(t, network, Config{}, eng)
			c := f.dial()
			c.send(req("1", "tools/call", `"name":"where","arguments":{}`))
			if got, want := c.line(), `"text":"`+network+` true"`; !strings.Contains(got, want) {
				t.Errorf("reply %s, want %s", got, want)
			}
			c.send(req("2", "tools/call", `"name":"wait","arguments":{}`))
			<-started
			c.c.Close()
			select {
			case o := <-ended:
				if o.Reason != engine.EndDisconnect || !errors.Is(o.Cause, engine.ErrDisconnected) {
					t.Errorf("outcome %+v", o)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the call did not end")
			}
			waitFor(t, "the connection to end", func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(events) == 2
			})
			mu.Lock()
			defer mu.Unlock()
			if events[0] != "start "+network || events[1] != "end "+network {
				t.Errorf("events %q", events)
			}
		})
	}
}
