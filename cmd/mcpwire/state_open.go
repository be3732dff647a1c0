package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mcpwire/mcpwire/internal/netutil"
	"github.com/mcpwire/mcpwire/state"
	"github.com/mcpwire/mcpwire/state/redisstate"
)

// openState opens what --state names: "memory" (the default: drafts in
// this process, change cues delivered in process) or
// redis://HOST:PORT/DB (drafts and change cues shared by every replica
// using that database; rediss://, a cluster's seeds and
// redis-sentinel:// too: redisstate.New), with rc the Redis options of
// --state-tls-* and --state-min-replicas (its Logger is log). An
// unreachable Redis fails here: serve does not start without its shared
// state (E1).
func openState(ctx context.Context, spec string, rc redisstate.Config, log *slog.Logger) (*sharedState, error) {
	if err := checkStateForm(spec); err != nil {
		return nil, err
	}
	switch {
	case spec == "" || spec == "memory":
		// One process: the cues need no backplane (the engine delivers
		// them in process, at no cost); the drafts live in memory.
		m := state.NewMemory(state.MemoryConfig{})
		return &sharedState{Store: m, close: []func() error{m.Close}}, nil
	case isRedisURL(spec):
		rc.Logger = log
		r, err := redisstate.New(ctx, spec, rc)
		if err != nil {
			return nil, fmt.Errorf("--state: %w", err)
		}
		log.Info("shared state on Redis", "db", netutil.RedactURL(spec))
		return &sharedState{Store: r, Backplane: r, close: []func() error{r.Close}}, nil
	}
	return nil, fmt.Errorf("--state %q: want memory or redis://HOST:PORT/DB", netutil.RedactURL(spec))
}

// isRedisURL reports whether spec names a Redis: redis://, rediss://,
// unix://, redis-sentinel:// or rediss-sentinel://.
func isRedisURL(spec string) bool {
	for _, p := range []string{"redis://", "rediss://", "unix://", "redis-sentinel://", "rediss-sentinel://"} {
		if strings.HasPrefix(spec, p) {
			return true
		}
	}
	return false
}

// checkStateForm refuses a --state that is neither memory nor a Redis URL
// (redis://, rediss://, unix://, redis-sentinel://, rediss-sentinel://): checked first, so that a typo such as
// "memroy" is named as one, not taken for a shared state.
func checkStateForm(spec string) error {
	switch {
	case spec == "" || spec == "memory", isRedisURL(spec):
		return nil
	}
	return fmt.Errorf("--state %q: want memory or redis://HOST:PORT/DB", netutil.RedactURL(spec))
}
