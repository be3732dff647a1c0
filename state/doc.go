// Package state holds what replicas of one MCP server share: state handles
// (explicit, principal-bound records a tool handler creates and reads
// again, SEC-06) and the backplane that carries change cues
// (list_changed, resources/updated) to every replica's listen streams.
//
// Two implementations are held to the same contract tests
// (state/statetest): Memory (one process, nothing to start) and
// state/redisstate (a shared redis-server).
//
// Guarantees and limits:
//
//   - Handles are 128 bits from crypto/rand, unpadded base64url
//     (NewHandle). A string of another shape is "not found" without a
//     lookup (Handle.Valid).
//   - A record is bound to the principal that created it: any other
//     principal, an unknown handle and an expired one all get ErrNotFound
//     (RELIABILITY E3).
//   - Every record expires: ttl 0 means the store's default (DefaultTTL,
//     1 h). Values are bounded (DefaultMaxValueBytes, 1 MiB: ErrTooLarge).
//     Memory also bounds the entries it holds (DefaultMaxRecords, 100,000:
//     ErrFull, which matches ErrUnavailable).
//   - CompareAndSet is atomic; the version starts at 1 and grows by one.
//   - Once applies a call once per (principal, key) within its ttl, across
//     replicas on the shared store (E4); a failing call is not remembered.
//   - Cues are delivered at most once, in order per publisher; a
//     subscriber that may have missed some is told (lost) and told again
//     when cues flow (restored), so listen streams can be closed and
//     clients re-listen (E1).
//   - A store that cannot be reached fails with ErrUnavailable, promptly
//     (answer it as HTTP 503). A store that can tell it lost its data
//     (redisstate: a Redis restart without persistence) answers a lookup
//     that misses soon after with ErrLost (which matches ErrUnavailable)
//     rather than ErrNotFound.
//   - A publish that may not have reached every replica is followed by a
//     CueMissed naming it, so that every replica ends the listen streams
//     that would have received it (engine, F9).
//
// Lock order in Memory: Memory.subMu, then memSub.mu (Publish queues
// under both); each memShard.mu is a leaf, taken one at a time; no
// callback runs under a lock.
package state
