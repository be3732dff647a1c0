package framing

import "errors"

// Sentinel errors. Callers compare them with errors.Is (or ==: framing never
// wraps them).
var (
	// ErrLineTooLong is returned once for each input line longer than the
	// configured MaxLine. The line is discarded and framing resumes with the
	// next one.
	ErrLineTooLong = errors.New("framing: line exceeds limit")

	// ErrNewlineInFrame is returned by Writer when a frame contains a raw
	// '\n'. Nothing is written.
	ErrNewlineInFrame = errors.New("framing: frame contains a raw newline")

	// ErrSlowConsumer is returned by Writer when queuing a frame would push
	// the bytes queued but not yet written past MaxPending. The Writer then
	// fails permanently.
	ErrSlowConsumer = errors.New("framing: peer is not reading: pending bytes over limit")

	// ErrClosed is returned by Writer after Close.
	ErrClosed = errors.New("framing: writer closed")

	// ErrReleased is returned by Reader.Next after Release.
	ErrReleased = errors.New("framing: reader released")

	// errBadCount reports an io.Reader that returned an impossible count.
	errBadCount = errors.New("framing: io.Reader returned an invalid count")
)
