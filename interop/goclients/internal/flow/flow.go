// Package flow is the part of the interop clients that does not depend on
// the SDK under test: command-line flags, the step log written to stdout,
// and the checks applied to what the server answered.
//
// Every client runs the same script against the server:
//
//  1. connect, pinned to protocol revision -version (2026-07-28); the
//     negotiated revision must be exactly that;
//  2. tools/list, which must list the echo tool and the -trigger tool;
//  3. tools/call echo {"text": -text}, which must answer the text unchanged;
//  4. subscriptions/listen {toolsListChanged}, which must be acknowledged;
//  5. tools/call -trigger, after which notifications/tools/list_changed must
//     arrive on the listen stream within -wait;
//  6. close the subscription and the connection.
//
// Each step prints one JSON object on stdout; the last line is the verdict.
// The exit status is 0 only when every step passed.
package flow

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// Config is what the command line asked for.
type Config struct {
	Client    string        // SDK label in the log, e.g. "go-sdk"
	URL       string        // Streamable HTTP endpoint; empty means stdio
	Command   []string      // stdio server command line (the arguments after the flags)
	Version   string        // protocol revision to pin
	EchoText  string        // text sent to the echo tool
	Trigger   string        // tool that changes the tool list
	Wait      time.Duration // how long to wait for the ack and for list_changed
	Timeout   time.Duration // bound on the whole run
	Transport string        // "http" or "stdio", derived
}

// Parse reads the flags shared by every interop client.
func Parse(client string) *Config {
	c := &Config{Client: client}
	flag.StringVar(&c.URL, "url", "", "Streamable HTTP endpoint (loopback); without it the arguments after the flags are a stdio server command")
	flag.StringVar(&c.Version, "version", "2026-07-28", "protocol revision to pin")
	flag.StringVar(&c.EchoText, "text", "mcpwire interop \u2713 h\u00e9llo", "text for the echo tool")
	flag.StringVar(&c.Trigger, "trigger", "test_trigger_tool_change", "tool whose call changes the tool list")
	flag.DurationVar(&c.Wait, "wait", 5*time.Second, "how long to wait for the listen acknowledgement and for list_changed")
	flag.DurationVar(&c.Timeout, "timeout", 30*time.Second, "bound on the whole run")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: %s [flags] (-url URL | SERVER_COMMAND ARGS...)\n", os.Args[0])
		flag.PrintDefaults()
	}
	flag.Parse()
	c.Command = flag.Args()
	switch {
	case c.URL != "" && len(c.Command) == 0:
		c.Transport = "http"
	case c.URL == "" && len(c.Command) > 0:
		c.Transport = "stdio"
	default:
		flag.Usage()
		os.Exit(2)
	}
	return c
}

var start = time.Now()

// Step logs one passed step.
func (c *Config) Step(step string, fields map[string]any) {
	c.emit(step, true, fields)
}

// Fail logs a failed step and the verdict, then exits 1.
func (c *Config) Fail(step string, err error) {
	c.emit(step, false, map[string]any{"error": err.Error()})
	c.emit("verdict", false, map[string]any{"failedStep": step})
	os.Exit(1)
}

// Done logs the verdict of a run in which every step passed.
func (c *Config) Done() {
	c.emit("verdict", true, nil)
}

func (c *Config) emit(step string, ok bool, fields map[string]any) {
	m := map[string]any{
		"client":    c.Client,
		"transport": c.Transport,
		"step":      step,
		"ok":        ok,
		"ms":        time.Since(start).Milliseconds(),
	}
	for k, v := range fields {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		b = []byte(fmt.Sprintf(`{"step":%q,"ok":false,"error":"unencodable log line"}`, step))
	}
	fmt.Println(string(b))
}

// CheckVersion fails unless the negotiated revision is the pinned one.
func (c *Config) CheckVersion(negotiated string) {
	if negotiated != c.Version {
		c.Fail("version", fmt.Errorf("negotiated %q, pinned %q", negotiated, c.Version))
	}
}

// CheckTools fails unless names holds the echo tool and the trigger tool.
func (c *Config) CheckTools(names []string) {
	for _, want := range []string{"echo", c.Trigger} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			c.Fail("tools/list", fmt.Errorf("tool %q not listed (got %s)", want, strings.Join(names, ",")))
		}
	}
}

// CheckEcho fails unless the echo result is exactly one text block equal to
// the text sent, and not an error.
func (c *Config) CheckEcho(isError bool, texts []string) {
	switch {
	case isError:
		c.Fail("tools/call echo", fmt.Errorf("isError result: %q", texts))
	case len(texts) != 1 || texts[0] != c.EchoText:
		c.Fail("tools/call echo", fmt.Errorf("got text content %q, want [%q]", texts, c.EchoText))
	}
}

// Await waits for ch for at most c.Wait; step names the failure.
func (c *Config) Await(ch <-chan struct{}, step, what string) {
	select {
	case <-ch:
	case <-time.After(c.Wait):
		c.Fail(step, fmt.Errorf("no %s within %s", what, c.Wait))
	}
}
