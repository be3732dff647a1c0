// Package golden replays the golden conversations every line-framed
// transport must hold to (stdio, TCP and Unix sockets): the same files, the
// same server, the same expected bytes.
//
// A conversation is a txtar archive in testdata/: a comment naming the
// requirements it guards, an "in" file (the lines a client sends; a line
// "#wait N" waits until N lines of output have arrived) and an "out" file
// (the lines the server must write, in order unless the comment contains
// "unordered"; lines after a line "#end" are written only once the client
// has ended the conversation). Nothing else may be written. A conversation ends when the
// client is done: the transport's end (EOF on stdin for stdio, the
// transport's Shutdown for sockets) completes what is still open — listen
// streams get their final result — and closes the output.
package golden

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mcp"
)

//go:embed testdata/*.txtar
var files embed.FS

// Conversation is one golden file.
type Conversation struct {
	Name    string
	Comment string
	In      []Step
	Out     []string
	// AtEnd is how many of the last Out lines come only after the end.
	AtEnd int
}

// Step is one input line, or a wait for Wait lines of output.
type Step struct {
	Line string // sent with its line ending as written in the file
	Wait int
}

// Unordered reports whether the output may come in any order.
func (c Conversation) Unordered() bool { return strings.Contains(c.Comment, "unordered") }

// Conversations returns every golden conversation.
func Conversations(t testing.TB) []Conversation {
	t.Helper()
	names, err := files.ReadDir("testdata")
	if err != nil || len(names) == 0 {
		t.Fatalf("golden: no conversations: %v", err)
	}
	var out []Conversation
	for _, n := range names {
		data, err := files.ReadFile(path.Join("testdata", n.Name()))
		if err != nil {
			t.Fatal(err)
		}
		c, err := parse(n.Name(), string(data))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// parse reads the txtar format: a comment, then "-- name --" headers.
func parse(name, data string) (Conversation, error) {
	c := Conversation{Name: name}
	parts := map[string]string{}
	cur := ""
	var b strings.Builder
	flush := func() {
		if cur == "" {
			c.Comment = b.String()
		} else {
			parts[cur] = b.String()
		}
		b.Reset()
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		if t := strings.TrimRight(line, "\n"); strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") {
			flush()
			cur = strings.TrimSuffix(strings.TrimPrefix(t, "-- "), " --")
			continue
		}
		b.WriteString(line)
	}
	flush()
	in, ok := parts["in"]
	if !ok {
		return c, fmt.Errorf("golden: %s has no \"in\" file", name)
	}
	for _, l := range strings.SplitAfter(in, "\n") {
		if l == "" {
			continue
		}
		if n, ok := strings.CutPrefix(strings.TrimSpace(l), "#wait "); ok {
			k, err := strconv.Atoi(n)
			if err != nil {
				return c, fmt.Errorf("golden: %s: bad %q", name, l)
			}
			c.In = append(c.In, Step{Wait: k})
			continue
		}
		c.In = append(c.In, Step{Line: l})
	}
	end := -1
	for _, l := range strings.Split(parts["out"], "\n") {
		switch t := strings.TrimSpace(l); {
		case t == "#end":
			end = len(c.Out)
		case t != "":
			c.Out = append(c.Out, l)
		}
	}
	if end >= 0 {
		c.AtEnd = len(c.Out) - end
	}
	return c, nil
}

// Meta is the params._meta member every test request carries.
const Meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// Request builds a request line: id is raw JSON, params the members of
// params before _meta (or "").
func Request(id, method, params string) string {
	p := "{" + Meta + "}"
	if params != "" {
		p = "{" + params + "," + Meta + "}"
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + p + `}`
}

// Server returns the engine every conversation runs against.
func Server(t testing.TB) *engine.Server {
	s := engine.New(engine.Config{Name: "golden", Version: "1", ProgressInterval: -1})
	add := func(tl engine.Tool) {
		if err := s.AddTool(tl); err != nil {
			t.Fatal(err)
		}
	}
	add(engine.Tool{Name: "echo", Handler: func(c *engine.Call) error {
		b, _ := c.ArgBytes("text")
		c.TextBytes(b)
		return nil
	}})
	add(engine.Tool{Name: "wait", Handler: func(c *engine.Call) error {
		// Reports progress, then waits for cancellation or 200 ms.
		c.Progress(1, 2, "")
		select {
		case <-c.Done():
			return c.Err()
		case <-time.After(200 * time.Millisecond):
		}
		c.Text("waited")
		return nil
	}})
	add(engine.Tool{Name: "block", Handler: func(c *engine.Call) error {
		<-c.Done()
		return c.Err()
	}})
	add(engine.Tool{Name: "touch", Handler: func(c *engine.Call) error {
		uri, _ := c.ArgString("uri")
		c.Server().ResourceUpdated(uri)
		c.Text("touched")
		return nil
	}})
	add(engine.Tool{Name: "panic", Handler: func(c *engine.Call) error {
		panic("golden: the panic tool was called")
	}})
	// A typed tool and a prompt with a required argument
	// (testdata/arguments.txtar).
	type addIn struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	type addOut struct {
		Sum int `json:"sum"`
	}
	if err := engine.AddTool(s, engine.Tool{Name: "add"}, func(_ *engine.Call, in addIn) (addOut, error) {
		return addOut{Sum: in.A + in.B}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPrompt(engine.Prompt{Name: "greet", Arguments: []mcp.PromptArgument{{Name: "name", Required: true}},
		Handler: func(c *engine.Call) error {
			name, _ := c.ArgString("name")
			return c.Return(mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("Please greet " + name + " warmly.")}}})
		}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResource(engine.Resource{URI: "test://r", Name: "r", Handler: func(c *engine.Call, uri string, _ map[string]string) error {
		return engine.ErrResourceNotFound(uri)
	}}); err != nil {
		t.Fatal(err)
	}
	add(engine.Tool{Name: "print", Handler: func(c *engine.Call) error {
		fmt.Println("stray debug output") // A14: must not reach the protocol stream
		c.Text("printed")
		return nil
	}})
	return s
}

// Replay plays c: it writes the input to w while reading the server's
// output from r, and once the input is sent and the expected number of
// lines has arrived it calls end, which must make the transport finish and
// close the output (r then reaches EOF). Everything read must be exactly
// the expected lines, each one JSON object ending in LF.
func Replay(t *testing.T, c Conversation, w io.Writer, r io.Reader, end func()) {
	t.Helper()
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	var got []string
	readDone := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			l, err := br.ReadString('\n')
			mu.Lock()
			if l != "" {
				got = append(got, l)
			}
			cond.Broadcast()
			mu.Unlock()
			if err != nil {
				if err == io.EOF {
					err = nil
				}
				readDone <- err
				return
			}
		}
	}()
	waitLines := func(n int) bool {
		timer := time.AfterFunc(5*time.Second, func() { mu.Lock(); cond.Broadcast(); mu.Unlock() })
		defer timer.Stop()
		deadline := time.Now().Add(5 * time.Second)
		mu.Lock()
		defer mu.Unlock()
		for len(got) < n && time.Now().Before(deadline) {
			cond.Wait()
		}
		return len(got) >= n
	}
	// Write from another goroutine: a pipe without a buffer blocks the
	// writer until the output is read.
	writeErr := make(chan error, 1)
	go func() {
		for _, s := range c.In {
			if s.Wait > 0 {
				waitLines(s.Wait)
				continue
			}
			if _, err := io.WriteString(w, s.Line); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()
	if before := len(c.Out) - c.AtEnd; !waitLines(before) {
		mu.Lock()
		t.Errorf("%s: timed out waiting for %d lines; got:\n%s", c.Name, before, strings.Join(got, ""))
		mu.Unlock()
	}
	if err := <-writeErr; err != nil {
		t.Fatalf("%s: write: %v", c.Name, err)
	}
	end()
	select {
	case err := <-readDone:
		if err != nil {
			t.Fatalf("%s: read: %v", c.Name, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: the output did not end after the transport's end", c.Name)
	}
	mu.Lock()
	lines := append([]string(nil), got...)
	mu.Unlock()
	for i, l := range lines {
		if !strings.HasSuffix(l, "\n") || strings.HasSuffix(l, "\r\n") || !json.Valid([]byte(l)) {
			t.Fatalf("%s: output line %d is not one JSON object ending in LF: %q", c.Name, i, l)
		}
		lines[i] = strings.TrimSuffix(l, "\n")
	}
	want := append([]string(nil), c.Out...)
	if len(lines) != len(want) {
		t.Fatalf("%s: got %d lines, want %d:\n%s", c.Name, len(lines), len(want), strings.Join(lines, "\n"))
	}
	if c.Unordered() {
		slices.Sort(lines)
		slices.Sort(want)
	}
	for i := range want {
		if !JSONEqual(lines[i], want[i]) {
			t.Fatalf("%s: line %d:\n got  %s\n want %s", c.Name, i, lines[i], want[i])
		}
	}
}

// JSONEqual compares two JSON texts by value (member order and spacing
// aside); texts that are not JSON compare as bytes.
func JSONEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}
