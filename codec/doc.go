// Package codec is the JSON-RPC 2.0 and MCP 2026-07-28 envelope layer of
// mcpwire: validation and field extraction (Peek), member lookup inside
// already validated spans (LookupPath), append-style encoders for every
// message the server writes, the mirrored header value codec
// (=?base64?…?=), and the one sonic configuration used for everything that
// is decoded into or encoded from Go values. It does no I/O and starts no
// goroutines; every function is safe for concurrent use on distinct buffers
// (and distinct PeekMemos).
//
// Spec references are the requirement IDs of /work/shared/spec/TRANSPORTS.md
// (GEN-*, ERR-*, META-*, B64-*, HDR-*) and RELIABILITY.md group A (A7–A13,
// A17).
//
// # Guarantees
//
//   - Peek validates the whole message in one pass (RFC 8259 grammar, UTF-8
//     of every string: GEN-02, A8) before it reports any structural error,
//     so a -32600 is never returned for bytes that are not JSON, and a
//     prefix of a valid message is never accepted (A7).
//   - How Peek reads a message changes nothing it reports: the readers of
//     the usual shape of a request (shape.go: each object's members in the
//     usual order, compact, compared as whole words) and a PeekMemo (of
//     the last _meta, and of the last request's stretches around its
//     arguments) give exactly the error and the envelope the general
//     object loop gives, every span at the same place (FuzzPeekShape,
//     FuzzPeekTemplate over sequences of messages). PeekLine, for the
//     line transports, takes only a compact message in that shape that ends
//     at a '\n', which its walk then proves to be the line's first: it
//     records what PeekWith does on the line (FuzzPeekLine) and declines
//     anything else, PeekWith then deciding.
//   - Peek, LookupPath, DecodeHeaderValue and the Append* encoders other
//     than AppendMarshal do not allocate (given a dst with room, and
//     nesting <= 256 levels), and never recurse on input nesting: 10,000
//     nested '[' cost no stack (A9). AppendMarshal costs sonic's one
//     16-byte allocation.
//   - A member that is repeated, or whose name only case-folds (Unicode
//     simple folding: "Method", "paramſ", Kelvin sign) to a member Peek
//     inspects at the top, params or params._meta level, is rejected
//     (ErrDuplicateKey, A10, CVE-2026-27896) before anything is decoded, so
//     a decoder that folds keys (sonic's encoding/json fallback) never sees
//     it. Unmarshal itself decodes case-sensitively while sonic runs
//     natively; TestSonicIsNotFallback fails the build when it does not.
//   - Error replies are ready to send: AppendErrorResponse omits "id" when
//     none was readable (GEN-05), and every sentinel carries the code and
//     HTTP status of the ERR table (§1.4). Peek keeps a valid id on every
//     -32600 so the reply can echo it (HVAL-03, A9).
//   - Everything the encoders write is valid UTF-8 JSON: invalid bytes and
//     encoded surrogates become \ufffd, U+2028/U+2029 are escaped, nothing
//     is HTML-escaped (A17). AppendString matches encoding/json byte for
//     byte.
//
// # Limits
//
//   - Nesting: DefaultMaxDepth = 128 levels counting the message object as
//     1 (RELIABILITY.md defaults); PeekConfig.MaxDepth up to MaxDepthLimit
//     (4096). Message size is not limited here: the framing layer caps it
//     (4 MiB by default) before Peek runs.
//   - Peek inspects three object levels only. Below them (params.arguments,
//     clientInfo, result, …) duplicates and case variants are data: the
//     handler's decoder decides (sonic: exact match, last one wins; see
//     LookupPathStrict for header checks that must not be ambiguous).
//   - Numbers are validated, not converted: ids and tokens stay raw tokens
//     (any length of digits is accepted as an integer id).
//   - Returned slices and Str values alias the input buffer and are valid
//     only while it is; copy before the buffer goes back to a pool.
//   - The UTF-8 checks and escapes follow encoding/json: an escaped lone
//     surrogate ("\ud800") is valid JSON and reads as U+FFFD.
//   - Base64 header values are strict (padding required, no whitespace,
//     canonical trailing bits, UTF-8 payload): stricter than RFC 4648
//     decoders that skip line breaks (B64-06).
//
// # Errors
//
// Sentinels (ErrParse, ErrBadID, …) are shared *Error values: compare with
// == to tell them apart; errors.Is matches any *Error with the same Code.
// Error() strings start with "codec: "; Error.Message is what peers see.
package codec
