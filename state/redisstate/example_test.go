package redisstate_test

import (
	"context"
	"log"
	"time"

	"github.com/mcpwire/mcpwire/state"
	"github.com/mcpwire/mcpwire/state/redisstate"
)

// Every replica opens its own Store on the shared Redis; a handle created
// through one is read through any other by the same principal.
func ExampleNew() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s, err := redisstate.New(ctx, "redis://127.0.0.1:6379/0", redisstate.Config{})
	if err != nil {
		log.Fatal(err) // matches state.ErrUnavailable when Redis cannot be reached
	}
	defer s.Close()
	err = s.Subscribe(ctx, func(c state.Cue) { log.Println("cue", c.Kind, c.URI) },
		func() { log.Println("backplane lost: close listen streams") },
		func() { log.Println("backplane restored") })
	if err != nil {
		log.Fatal(err)
	}
	h, err := s.Create(ctx, "alice", []byte("draft"), 10*time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	log.Println("handle", h)
}
