package redisstate

import (
	"context"
	"fmt"

	"github.com/mcpwire/mcpwire/state"
)

// Ping checks that Redis answers, within Config.OpTimeout (or ctx's
// deadline if sooner): for readiness probes. The error wraps
// state.ErrUnavailable. It is not counted in Stats.Ops.
func (s *Store) Ping(ctx context.Context) error {
	if s.isClosed() {
		return fmt.Errorf("redisstate: ping: store closed: %w", state.ErrUnavailable)
	}
	cctx, cancel := s.opCtx(ctx)
	defer cancel()
	if err := s.c.Do(cctx, s.c.B().Ping().Build()).Error(); err != nil {
		return fmt.Errorf("redisstate: ping: %w: %w", state.ErrUnavailable, err)
	}
	return nil
}
