// Package mrtr is a handler-side toolkit for multi round-trip requests
// (MRTR, MCP 2026-07-28, TRANSPORTS.md §7): a tool, prompt or resource
// handler that needs something from the client (the user's input, a
// completion from the client's model, the client's roots) returns an
// InputRequiredResult naming it, and the client retries the same request
// with the answers. The package gives such handlers three things:
//
//   - a Signer for requestState, the opaque string the retry brings back
//     byte for byte (MRTR-05): HMAC-SHA256 under a key list (the first
//     key signs, every key verifies, so a fleet rotates keys without
//     refusing states in flight), an expiry, and a binding to the
//     request that received it (principal, method and target, a digest of
//     the arguments), carrying the handler's own bytes (SEC-07);
//   - builders for the embedded requests (MRTR-03): Elicit, ElicitURL,
//     Sample, SampleText, ListRoots, each an mcp.InputRequest, and Allowed
//     to check one against this request's clientCapabilities (MRTR-04);
//   - typed decoding of the retry's inputResponses: Responses, then
//     Elicit, Sampling, Roots or Decode by key.
//
// A handler checks what the retry brought, then decides (Example shows
// it whole, with a client):
//
//	release, resumed, err := signer.Verify(c) // -32602: tampered, expired, someone else's…
//	if err != nil {
//		return err
//	}
//	in, err := mrtr.Responses(c)
//	if err != nil {
//		return err
//	}
//	answer, err := in.Elicit("confirm")
//	if !resumed || errors.Is(err, mrtr.ErrResponseMissing) { // first round, or unanswered (MRTR-11)
//		return signer.Ask(c, map[string]mcp.InputRequest{"confirm": mrtr.Elicit("Deploy?", schema)}, []byte("release-42"))
//	}
//	if err != nil {
//		return err // a malformed answer: -32602
//	}
//	// answer.Accepted(), answer.Decode(&form), string(release)…
//
// Any replica with the same keys can serve the retry (MRTR-09): nothing
// is kept between rounds but what the state carries. LoadKeys reads the
// key file `mcpwire serve --state-key-file` uses (or MCPWIRE_STATE_KEYS).
//
// # Guarantees
//
//   - A state verifies only for the request it was issued to: the same
//     principal (Config.Principal; by default nil, a string or a
//     fmt.Stringer, any other principal type refused at Sign rather than
//     bound to nothing), the same method and tool or prompt name or
//     resource URI, and arguments with the same JSON value (member order,
//     spacing, escapes and number spelling do not matter; see
//     canonical.go for what "same" means).
//   - A state that fails is answered -32602 (TRANSPORTS.md §1.4) with a
//     one-line message naming the failed check, never quoting the input,
//     and counted by reason in Stats: malformed, foreign key, tampered,
//     expired, wrong principal, wrong target, wrong arguments. Tags are
//     compared in constant time (crypto/hmac.Equal), and nothing of the
//     payload is interpreted before its tag has been checked.
//   - Garbage never panics: the decoder is fuzzed (FuzzOpen, past inputs
//     in testdata/fuzz), and its work is bounded by Config.MaxData before
//     any decoding.
//   - A malformed or missing input response is an *Error (-32602) that
//     says which key and what is wrong; errors.Is tells ErrResponseMissing
//     (ask again, MRTR-11) from ErrResponseMalformed.
//   - Nothing here starts a goroutine or keeps a Call: a Signer is safe for
//     concurrent use, and everything returned is a copy the handler may
//     keep.
//
// # Limits
//
// Config follows the repository's limit rule (0: the Default* constant,
// negative: no limit, unsafe): TTL (DefaultTTL, 10 minutes), MaxData
// (DefaultMaxData, 4 KiB of the author's data; it also bounds the token
// length Verify accepts). Keys are at least MinKeyBytes (16) long.
//
// What it does not do: the data a state carries is readable by the client
// (base64, not encryption): keep secrets out of it, or keep them in a store
// under a handle the state carries. A state is not single-use: the same
// retry may be sent twice (MRTR-08 lets a server answer input_required
// again; enforce single use in a store if an action must not repeat).
// There is no round limit (MRTR-12): count rounds in the data if a flow
// needs one.
//
// Spec: https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr
package mrtr
