package refserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/mcpwire/mcpwire/engine"
)

// Limits of our own tools; larger arguments are refused by their
// inputSchema (a tool error naming the argument, SEP-1303). The tags of
// the argument types below spell the same numbers (TestOwnToolLimits).
const (
	MaxBigBytes   = 16 << 20 // big {bytes}
	MaxSleepMs    = 10 * 60 * 1000
	MaxSleepSteps = 10000
)

// bigText is the shared body of big results: MaxBigBytes of 'x', built once
// on first use and only ever read.
var bigText = sync.OnceValue(func() []byte { return bytes.Repeat([]byte{'x'}, MaxBigBytes) })

// Our own tools are typed (engine.AddTool): their input schemas, and echo's
// and touch's output schemas, come from these types.

// EchoArgs are echo's arguments.
type EchoArgs struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

// EchoResult is echo's structured result. Its text content is the text
// itself, not its JSON: echo answers what older clients and every
// benchmark client expect ("hello world"), with structuredContent beside.
type EchoResult struct {
	Text string `json:"text"`
}

// AppendResultText implements engine.ResultText.
func (r EchoResult) AppendResultText(dst []byte) []byte { return append(dst, r.Text...) }

// SleepArgs are sleep's arguments.
type SleepArgs struct {
	Ms    int `json:"ms,omitempty" jsonschema:"how long to wait, in milliseconds" minimum:"0" maximum:"600000"`
	Steps int `json:"steps,omitempty" jsonschema:"progress notifications to send, spread evenly" minimum:"0" maximum:"10000"`
}

// SleepResult is sleep's structured result; its text is "slept N ms".
type SleepResult struct {
	SleptMs int `json:"sleptMs"`
}

// AppendResultText implements engine.ResultText.
func (r SleepResult) AppendResultText(dst []byte) []byte {
	dst = append(dst, "slept "...)
	dst = strconv.AppendInt(dst, int64(r.SleptMs), 10)
	return append(dst, " ms"...)
}

// BigArgs are big's arguments.
type BigArgs struct {
	Bytes int `json:"bytes,omitempty" jsonschema:"the size of the text result, in bytes" minimum:"0" maximum:"16777216"`
}

// TouchArgs are touch's arguments.
type TouchArgs struct {
	URI string `json:"uri" jsonschema:"the resource that changed" minLength:"1"`
}

// TouchResult is touch's structured result; its text is "updated URI".
type TouchResult struct {
	URI string `json:"uri"`
}

// AppendResultText implements engine.ResultText.
func (r TouchResult) AppendResultText(dst []byte) []byte {
	return append(append(dst, "updated "...), r.URI...)
}

// addOwnTools registers echo, sleep, big, panic and touch.
func (r *refServer) addOwnTools() error {
	s := r.srv
	return errors.Join(
		engine.AddTool(s, engine.Tool{
			Name:        "echo",
			Description: "Returns its text argument unchanged",
			Annotations: json.RawMessage(`{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}`),
			// A few hundred nanoseconds of work: run where the request was
			// read, without a hand-off (stdio and sockets).
			Inline: true,
		}, echo),
		engine.AddTool(s, engine.Tool{
			Name:        "sleep",
			Description: "Waits ms milliseconds, sending steps progress notifications spread evenly (when the request has a progressToken); stops at once when cancelled",
			Annotations: json.RawMessage(`{"readOnlyHint":true,"openWorldHint":false}`),
		}, sleep),
		// big and panic set their own result (a shared text without a
		// copy; none): typed arguments, no structured result (Out any).
		engine.AddTool(s, engine.Tool{
			Name:        "big",
			Description: "Returns a text result of exactly bytes bytes (default 0, at most 16 MiB)",
			Annotations: json.RawMessage(`{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}`),
		}, big),
		engine.AddTool(s, engine.Tool{
			Name:        "panic",
			Description: "Panics; the server answers -32603 with a generic message",
		}, func(*engine.Call, struct{}) (any, error) {
			panic("refserver: the panic tool was called")
		}),
		engine.AddTool(s, engine.Tool{
			Name:        "touch",
			Description: "Signals that the resource uri changed (notifications/resources/updated on listen streams subscribed to it)",
		}, r.touch),
	)
}

// echo returns its text. The engine has checked the arguments on the raw
// bytes (a flat schema) and decoded them; the result is encoded once, as
// structuredContent and, through EchoResult's text, as the text content.
func echo(_ *engine.Call, in EchoArgs) (EchoResult, error) {
	return EchoResult(in), nil
}

func big(c *engine.Call, in BigArgs) (any, error) {
	c.TextBytes(bigText()[:in.Bytes])
	return nil, nil
}

func sleep(c *engine.Call, in SleepArgs) (SleepResult, error) {
	total := time.Duration(in.Ms) * time.Millisecond
	start := time.Now()
	t := time.NewTimer(time.Hour)
	t.Stop() // armed per step below (Go 1.23+ timers: Reset after Stop is safe)
	defer t.Stop()
	// Step i of n is due at start + total*i/n; the last one ends the wait.
	// Without steps the whole wait is one step that reports nothing.
	n := max(in.Steps, 1)
	for i := 1; i <= n; i++ {
		due := start.Add(total * time.Duration(i) / time.Duration(n))
		if d := time.Until(due); d > 0 {
			t.Reset(d)
			select {
			case <-t.C:
			case <-c.Done():
				return SleepResult{}, c.Err()
			}
		} else if err := c.Err(); err != nil {
			return SleepResult{}, err
		}
		if in.Steps > 0 {
			c.Progress(float64(i), float64(in.Steps), "")
		}
	}
	return SleepResult{SleptMs: in.Ms}, nil
}

func (r *refServer) touch(_ *engine.Call, in TouchArgs) (TouchResult, error) {
	// With a backplane the update may fail to go out (shared state
	// unreachable): the caller gets -32603, HTTP 503, and may retry.
	if err := r.srv.ResourceUpdated(in.URI); err != nil {
		return TouchResult{}, err
	}
	return TouchResult(in), nil
}
