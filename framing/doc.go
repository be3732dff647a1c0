// Package framing splits and writes newline-delimited frames (NDJSON, as
// used by the MCP stdio transport and by mcpwire over TCP and Unix sockets).
//
// It knows bytes only: no JSON, no MCP, no goroutines, no sockets. It is the
// hot path of the engine, so the steady state allocates nothing.
//
// # Reading
//
// Reader pulls frames from an io.Reader; Decoder is the same splitter driven
// by pushing chunks (for event loops such as gnet's OnTraffic). Both apply
// these rules:
//
//   - A frame is a line without its '\n' and without one '\r' right before
//     it, so CRLF input is accepted.
//   - Blank lines (empty, or made only of ' ', '\t' and '\r') are skipped.
//     Other whitespace is left alone.
//   - A frame is at most MaxLine bytes (default DefaultMaxLine, 4 MiB,
//     counted without the terminator). A longer line is reported once with
//     ErrLineTooLong, counted (TooLong), and its first bytes kept for the
//     log (LastTooLong). Its remainder is discarded up to the next '\n'
//     without being buffered: however long the line, memory stays at one
//     read buffer plus at most MaxLine+1 bytes of scratch (rounded up to a
//     pool size class). Framing resumes
//     with the next line. The limit is checked before the blank-line rule:
//     an over-long run of spaces is rejected too.
//   - Input ending without a final '\n' still yields its last line (Reader
//     at io.EOF, Decoder after End).
//   - The limit can be disabled with a negative MaxLine; memory then follows
//     the longest line a peer sends, which is unsafe on untrusted input.
//
// A Decoder's caller that finds where a line ends while it reads it (the
// line transports, with codec.PeekLine) may take the line with Rest and
// TakeLine instead of Next: the same frame under the same rules, without
// a search of its own; any line TakeLine refuses is left to Next.
//
// A returned frame aliases internal or caller memory: a sub-slice of the
// read buffer or of the chunk given to Decoder.Feed when the line lies
// wholly inside it (zero copy), otherwise a scratch buffer holding a line
// that was split across reads or chunks. It is valid only until the next
// call to Next (or Feed, End, Release). A caller that needs a frame longer,
// for example to hand it to another goroutine, must copy it. Frames have
// their capacity clipped, so appending to one never overwrites the input
// that follows.
//
// Reader reads into one pooled buffer of ReaderConfig.ReadSize bytes
// (default DefaultReadSize, 64 KiB: one full Linux pipe). The scratch buffer
// grows only for a line that straddles reads, and shrinks back to at most
// ReadSize as soon as that line is consumed.
//
// # Writing
//
// Writer writes frames, each followed by one '\n', and is safe for
// concurrent use by any number of goroutines. It has no goroutine and no
// timer: the goroutine that finds the Writer idle writes everything queued,
// including frames other goroutines add while its Write runs, in batches of
// one Write call each, and returns when nothing is left (group commit).
// Frames are never interleaved. A frame containing a raw '\n' is refused with
// ErrNewlineInFrame, so a frame can never break the framing of the stream.
//
// Bytes queued but not yet written are capped by WriterConfig.MaxPending
// (default DefaultMaxPending, 64 MiB). When a peer stops reading, the
// goroutine in Write blocks, the others keep queuing, and the frame that
// would cross the cap gets ErrSlowConsumer: the Writer fails permanently and
// drops its queue. The engine should then close the connection, which also
// unblocks the Write. Errors are sticky: after the first write error, every
// call returns it.
//
// # Limits
//
// mcpwire's limits follow one rule. Every limit field gives its unit and
// its default, an exported Default* constant; 0 selects that default; a
// negative value means no limit, which is unsafe with a peer that is not
// trusted. A field that cannot go without a limit says so and takes a
// negative value as 0, the default.
//
// Here: ReaderConfig.MaxLine (DefaultMaxLine, 4 MiB, ErrLineTooLong,
// counted by TooLong) and WriterConfig.MaxPending (DefaultMaxPending,
// 64 MiB, ErrSlowConsumer) can be disabled with a negative value;
// ReaderConfig.ReadSize (DefaultReadSize, 64 KiB) sizes a buffer, and
// takes a negative value as the default.
//
// # Buffers
//
// AcquireBuf and ReleaseBuf share size-classed pools (4 KiB to TopClass,
// 1 MiB). Buffers above TopClass are never pooled, so one huge message does
// not pin memory. Reader, Decoder and Writer take their buffers from these
// pools and give them back on Release or Close.
//
// # Errors
//
// Errors are sentinel values whose text starts with "framing: ";
// errors from the underlying io.Reader or io.Writer are returned as they
// are.
package framing
