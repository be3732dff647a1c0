// Package demo drives a reference server over stdio end to end: the
// `mcpwire demo` command. It holds a deliberately small stdio client (spawn,
// line framing, demultiplexing by id, graceful stop); the full client
// transports come later.
package demo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpwire/mcpwire/framing"
)

// Message is a decoded server message.
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	} `json:"error,omitempty"`
}

type client struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	w      *framing.Writer
	nextID atomic.Int64

	mu      sync.Mutex
	pending map[string]chan *Message
	notes   []*Message // notifications, in arrival order
	noID    []*Message // responses without id (parse errors)
	readErr error
	done    chan struct{}
	stderr  *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func start(path string, args ...string) (*client, error) {
	cmd := exec.Command(path, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &client{cmd: cmd, stdin: stdin, pending: map[string]chan *Message{}, done: make(chan struct{}), stderr: &lockedBuffer{}}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c.w = framing.NewWriter(stdin, framing.WriterOptions{})
	go c.readLoop(stdout)
	return c, nil
}

func (c *client) readLoop(r io.Reader) {
	defer close(c.done)
	fr := framing.NewReader(bufio.NewReaderSize(r, 64<<10), framing.ReaderOptions{MaxLine: 64 << 20})
	defer fr.Release()
	for {
		line, err := fr.Next()
		if err != nil {
			c.mu.Lock()
			c.readErr = err
			c.mu.Unlock()
			return
		}
		m := new(Message)
		if err := json.Unmarshal(line, m); err != nil {
			c.mu.Lock()
			c.readErr = fmt.Errorf("server wrote a line that is not JSON: %q", line)
			c.mu.Unlock()
			return
		}
		c.mu.Lock()
		switch {
		case m.Method != "":
			c.notes = append(c.notes, m)
		case m.ID == nil:
			c.noID = append(c.noID, m)
		default:
			if ch, ok := c.pending[string(m.ID)]; ok {
				delete(c.pending, string(m.ID))
				ch <- m
			}
		}
		c.mu.Unlock()
	}
}

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mcpwire-demo","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}`

// send writes a request with a fresh id and returns the id and a channel
// for its response. params is the JSON of params members other than _meta
// (may be empty); extraMeta is appended inside _meta (e.g. `,"progressToken":1`).
func (c *client) send(method, params, extraMeta string) (string, chan *Message, error) {
	id := strconv.FormatInt(c.nextID.Add(1), 10)
	ch := make(chan *Message, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	p := "{" + meta + extraMeta + "}}"
	if params != "" {
		p = "{" + params + "," + meta + extraMeta + "}}"
	}
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + p + `}`
	return id, ch, c.w.WriteFrame([]byte(line))
}

func (c *client) call(ctx context.Context, method, params, extraMeta string) (*Message, error) {
	_, ch, err := c.send(method, params, extraMeta)
	if err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		return m, nil
	case <-c.done:
		return nil, fmt.Errorf("server output ended: %v", c.readErr)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// rawCall sends a hand-written request line whose raw JSON id is id.
func (c *client) rawCall(ctx context.Context, id, line string) (*Message, error) {
	ch := make(chan *Message, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.raw(line); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		return m, nil
	case <-c.done:
		return nil, fmt.Errorf("server output ended: %v", c.readErr)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *client) raw(line string) error { return c.w.WriteFrame([]byte(line)) }

func (c *client) notifications(method string) []*Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Message
	for _, m := range c.notes {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// stop closes stdin (STD-11) and waits for the exit, killing after timeout.
func (c *client) stop(timeout time.Duration) (time.Duration, error) {
	t0 := time.Now()
	_ = c.w.Close()
	_ = c.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case err := <-exited:
		return time.Since(t0), err
	case <-time.After(timeout):
		_ = c.cmd.Process.Kill()
		<-exited
		return time.Since(t0), errors.New("server did not exit after stdin closed; killed")
	}
}
