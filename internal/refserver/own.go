package refserver

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
)

// Limits of our own tools; larger arguments are answered -32602.
const (
	MaxBigBytes   = 16 << 20 // big {bytes}
	MaxSleepMs    = 10 * 60 * 1000
	MaxSleepSteps = 10000
)

// bigText is the shared body of big results: MaxBigBytes of 'x', built once
// on first use and only ever read.
var bigText = sync.OnceValue(func() []byte { return bytes.Repeat([]byte{'x'}, MaxBigBytes) })

func (r *refServer) ownTools() []engine.Tool {
	return []engine.Tool{
		{
			Name:        "echo",
			Description: "Returns its text argument unchanged",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}`),
			Handler:     echo,
			// A few hundred nanoseconds of work: run where the request was
			// read, without a hand-off (stdio and sockets).
			Inline: true,
		},
		{
			Name:        "sleep",
			Description: "Waits ms milliseconds, sending steps progress notifications spread evenly (when the request has a progressToken); stops at once when cancelled",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"ms":{"type":"integer","minimum":0,"maximum":` + strconv.Itoa(MaxSleepMs) + `},` +
				`"steps":{"type":"integer","minimum":0,"maximum":` + strconv.Itoa(MaxSleepSteps) + `}}}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true,"openWorldHint":false}`),
			Handler:     sleep,
		},
		{
			Name:        "big",
			Description: "Returns a text result of exactly bytes bytes (default 0, at most 16 MiB)",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"bytes":{"type":"integer","minimum":0,"maximum":` + strconv.Itoa(MaxBigBytes) + `}}}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true,"idempotentHint":true,"openWorldHint":false}`),
			Handler:     big,
		},
		{
			Name:        "panic",
			Description: "Panics; the server answers -32603 with a generic message",
			InputSchema: schemaNoArgs,
			Handler: func(c *engine.Call) error {
				panic("refserver: the panic tool was called")
			},
		},
		{
			Name:        "touch",
			Description: "Signals that the resource uri changed (notifications/resources/updated on listen streams subscribed to it)",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"uri":{"type":"string"}},"required":["uri"]}`),
			Handler:     r.touch,
		},
	}
}

// echo returns the text argument without allocating: ArgBytes yields the
// bytes inside the request (or unescaped into the Call's scratch space) and
// TextBytes encodes them straight into the response.
func echo(c *engine.Call) error {
	b, ok := c.ArgBytes("text")
	if !ok {
		return errTextRequired
	}
	c.TextBytes(b)
	return nil
}

var (
	errTextRequired = codec.NewError(codec.CodeInvalidParams, "Invalid params: arguments.text must be a string")
	errURIRequired  = codec.NewError(codec.CodeInvalidParams, "Invalid params: arguments.uri must be a string")
)

// intArg reads the optional integer argument key in [0, max]; absent means 0.
func intArg(c *engine.Call, key string, max int64) (int64, error) {
	raw, ok := codec.LookupPath(c.Arguments(), key)
	if !ok {
		return 0, nil
	}
	bad := codec.NewError(codec.CodeInvalidParams,
		"Invalid params: arguments."+key+" must be an integer from 0 to "+strconv.FormatInt(max, 10))
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > float64(max) {
		return 0, bad
	}
	return int64(f), nil
}

func big(c *engine.Call) error {
	n, err := intArg(c, "bytes", MaxBigBytes)
	if err != nil {
		return err
	}
	c.TextBytes(bigText()[:n])
	return nil
}

func sleep(c *engine.Call) error {
	ms, err := intArg(c, "ms", MaxSleepMs)
	if err != nil {
		return err
	}
	steps, err := intArg(c, "steps", MaxSleepSteps)
	if err != nil {
		return err
	}
	total := time.Duration(ms) * time.Millisecond
	start := time.Now()
	t := time.NewTimer(time.Hour)
	t.Stop() // armed per step below (Go 1.23+ timers: Reset after Stop is safe)
	defer t.Stop()
	// Step i of n is due at start + total*i/n; the last one ends the wait.
	// Without steps the whole wait is one step that reports nothing.
	n := steps
	if n == 0 {
		n = 1
	}
	for i := int64(1); i <= n; i++ {
		due := start.Add(total * time.Duration(i) / time.Duration(n))
		if d := time.Until(due); d > 0 {
			t.Reset(d)
			select {
			case <-t.C:
			case <-c.Done():
				return c.Err()
			}
		} else if err := c.Err(); err != nil {
			return err
		}
		if steps > 0 {
			c.Progress(float64(i), float64(steps), "")
		}
	}
	c.Text("slept " + strconv.FormatInt(ms, 10) + " ms")
	return nil
}

func (r *refServer) touch(c *engine.Call) error {
	uri, ok := c.ArgString("uri")
	if !ok || uri == "" {
		return errURIRequired
	}
	// With a backplane the update may fail to go out (shared state
	// unreachable): the caller gets -32603, HTTP 503, and may retry.
	if err := r.srv.ResourceUpdated(uri); err != nil {
		return err
	}
	c.Text("updated " + uri)
	return nil
}
