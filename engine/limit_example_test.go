package engine_test

import (
	"context"
	"fmt"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/transport/linestream"
)

// Per-caller limits on a line transport: alice may hold one listen stream
// (MaxListensPerPrincipal); her second, on another connection, is refused
// with -32603 and data naming the limit and when to retry (on Streamable
// HTTP: status 429 and Retry-After), while bob is served.
func ExampleConfig_perCaller() {
	srv := engine.New(engine.Config{Name: "example", Version: "1", MaxListensPerPrincipal: 1})
	defer func() { _ = srv.Shutdown(context.Background()) }()
	listen := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{},` + exampleMeta + `}}`
	for _, who := range []string{"alice", "alice", "bob"} {
		got := make(chan string, 4)
		conn := linestream.NewMem(engine.NewScope(srv, ""), func(frame []byte) error {
			got <- string(frame)
			return nil
		}, linestream.Config{}, who)
		defer conn.Close()
		_ = conn.Send([]byte(listen))
		fmt.Println(who+":", <-got)
	}
	fmt.Println("refused:", srv.LimitStats().ListenPerPrincipal.Load())
	// Output:
	// alice: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":{}}}
	// alice: {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Too many requests: too many open listen streams for this caller; retry later","data":{"limit":"listen_per_principal","retryAfter":1}}}
	// bob: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":{}}}
	// refused: 1
}
