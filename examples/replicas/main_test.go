package main

import (
	"context"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/client"
	httpclient "github.com/mcpwire/mcpwire/client/streamhttp"
	"github.com/mcpwire/mcpwire/internal/redistest"
)

// TestReplicas runs two replicas of the program on one redis-server: a
// note remembered through the first is recalled through the second, and a
// change announced on the second reaches a listen stream held by the
// first.
func TestReplicas(t *testing.T) {
	r := redistest.Start(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	replica := func() (url string, done chan error) {
		addrc, done := make(chan string, 1), make(chan error, 1)
		go func() { done <- run(ctx, "127.0.0.1:0", r.URL(), func(a string) { addrc <- a }) }()
		select {
		case a := <-addrc:
			return "http://" + a + "/mcp", done
		case err := <-done:
			t.Fatal(err)
		}
		return "", nil
	}
	urlA, doneA := replica()
	urlB, doneB := replica()
	dial := func(url string) *client.Client {
		tr, err := httpclient.Dial(url, httpclient.Config{})
		if err != nil {
			t.Fatal(err)
		}
		c := client.New(tr, client.Config{})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	a, b := dial(urlA), dial(urlB)
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()

	res, err := b.CallTool(cctx, "remember", map[string]string{"text": "meet at noon"}, nil)
	var ref struct {
		Handle string `json:"handle"`
	}
	if err != nil || res.IsError || res.DecodeStructured(&ref) != nil || ref.Handle == "" {
		t.Fatalf("remember on B: %v %+v", err, res)
	}
	res, err = a.CallTool(cctx, "recall", map[string]string{"handle": ref.Handle}, nil)
	if err != nil || res.Text() != `{"text":"meet at noon"}` {
		t.Fatalf("recall on A: %v %+v", err, res)
	}
	res, err = a.CallTool(cctx, "recall", map[string]string{"handle": "no-such-handle"}, nil)
	if err != nil || !res.IsError {
		t.Fatalf("recall of an unknown handle: %v %+v (want an isError result)", err, res)
	}

	sub, err := a.Listen(cctx, client.Filter{ResourceSubscriptions: []string{"note://board"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := b.CallTool(cctx, "touch", nil, nil); err != nil {
		t.Fatal(err)
	}
	for got := false; !got; {
		select {
		case e, ok := <-sub.Events():
			if !ok {
				t.Fatalf("the listen stream ended: %v", sub.Err())
			}
			got = e.Kind == client.EventNotification && e.URI == "note://board"
		case <-cctx.Done():
			t.Fatal("the change announced on B never reached the listener on A")
		}
	}
	stop()
	for _, d := range []chan error{doneA, doneB} {
		if err := <-d; err != nil {
			t.Fatal(err)
		}
	}
}
