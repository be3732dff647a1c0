package state

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Handle is an opaque, unguessable state handle: 128 random bits or more,
// encoded for use in JSON and URIs. It means nothing without the principal
// it is bound to.
type Handle string

// Record is a handle's current value.
type Record struct {
	Value   []byte
	Version uint64    // starts at 1, +1 on every successful CompareAndSet
	Expires time.Time // zero: no expiry
}

// Errors every Store reports.
var (
	// ErrNotFound: no such handle for this principal — unknown, expired,
	// or bound to someone else (the three are indistinguishable, E3).
	ErrNotFound = errors.New("state: not found")
	// ErrConflict: CompareAndSet saw another version.
	ErrConflict = errors.New("state: version conflict")
	// ErrUnavailable: the shared engine cannot be reached; the caller
	// should answer with a retryable error (HTTP 503, E1).
	ErrUnavailable = errors.New("state: store unavailable")
	// ErrTooLarge: a value over the store's limit.
	ErrTooLarge = errors.New("state: value too large")
	// ErrLost: a lookup missed shortly after the store detected that it
	// lost its data (a restart without persistence, a flush): the record
	// may have existed. It matches ErrUnavailable (HTTP 503), so that a
	// client is not told "unknown handle" for a handle that was lost.
	ErrLost = fmt.Errorf("state: the store lost its data; the record may have existed: %w", ErrUnavailable)
)

// Store keeps principal-bound records. Every method is safe for concurrent
// use; principal is the authenticated identity (plus tenant, where there
// is one) and is never taken from request content.
type Store interface {
	// Create stores value under a new handle bound to principal, expiring
	// after ttl (0: the store's default).
	Create(ctx context.Context, principal string, value []byte, ttl time.Duration) (Handle, error)
	// Get reads a record; ErrNotFound for anything principal may not see.
	Get(ctx context.Context, principal string, h Handle) (Record, error)
	// CompareAndSet replaces the value if the record is at version and
	// returns the new version; ErrConflict otherwise. ttl 0 keeps the
	// current expiry.
	CompareAndSet(ctx context.Context, principal string, h Handle, version uint64, value []byte, ttl time.Duration) (uint64, error)
	// Delete removes a record (no error if it is gone).
	Delete(ctx context.Context, principal string, h Handle) error
	// Once runs fn at most once per (principal, key) within ttl and
	// returns its result to every caller with the same key: a call re-sent
	// with a new JSON-RPC id and the same idempotency key is applied once
	// (E4). A concurrent second caller waits for the first.
	Once(ctx context.Context, principal, key string, ttl time.Duration, fn func() ([]byte, error)) ([]byte, error)
	// Close releases the store's resources.
	Close() error
}

// CueKind says what changed.
type CueKind uint8

const (
	CueToolsChanged CueKind = iota + 1
	CuePromptsChanged
	CueResourcesChanged
	CueResourceUpdated // URI names the resource
	// CueMissed says that a cue of kind Of (with URI, for
	// CueResourceUpdated; Of 0: any cue) may not have reached every
	// replica: its publish failed or timed out. Every replica ends the
	// listen streams that would have received it, so their clients
	// re-listen and re-fetch.
	CueMissed
)

// Cue is one change published to every replica. Delivery is at most once
// (the spec has no replay); a replica that was away misses it, and its
// listen streams were closed while it was away, so their clients re-listen
// and re-fetch.
type Cue struct {
	Kind CueKind
	URI  string
	Of   CueKind // for CueMissed: the kind of the missed cue (0: any)
	// Origin, for CueMissed, names the replica that sent it (0: none
	// given), so that the sender can skip its own echo: it ended its
	// affected listen streams already, and ending them again would end
	// streams that listened anew since.
	Origin uint64
}

// Backplane carries cues between replicas.
type Backplane interface {
	// Publish sends a cue to every replica, this one included.
	Publish(ctx context.Context, c Cue) error
	// Subscribe calls deliver for every cue published by any replica
	// (from one goroutine, in order per publisher), and lost/restored when
	// the connection to the shared engine drops and comes back (listen
	// streams must then be closed: they may have missed cues). It returns
	// once the subscription is active.
	Subscribe(ctx context.Context, deliver func(Cue), lost, restored func()) error
	// Close ends the subscription.
	Close() error
}
