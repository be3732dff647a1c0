package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/mcpwire/mcpwire/client"
	"github.com/mcpwire/mcpwire/mrtr"
)

// MRTR in `mcpwire call` (TRANSPORTS.md §7). A server that needs input
// answers input_required with requests under keys it chose; call shows
// each on stderr (what kind, the message, the form's schema, the
// messages to sample) and answers it from what the command line gave:
//
//	--input KEY=JSON     the answer to the request KEY (repeatable)
//	--input KEY=@FILE    the same, read from FILE
//	--inputs FILE        a JSON object {"KEY": answer, …}; --input wins
//
// The answer is the result the request asks for: an ElicitResult
// ({"action":"accept","content":{…}}, or decline, cancel), a
// CreateMessageResult, a ListRootsResult. With every key answered the call
// is retried with the answers and the requestState (MRTR-05); a key
// without an answer ends the command with exit status 1 and the --input
// it would take, an answer template included. A key asked for again after
// it was answered ends it too: the server did not take the answer, and
// sending it again would only go round.

// defaultCallCaps are the clientCapabilities call declares: every kind of
// input it can answer from the command line.
const defaultCallCaps = `{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{}}`

// maxCallRounds bounds the retries of one call (MRTR-12).
const maxCallRounds = client.DefaultMaxInputRounds

// inputFlags is --input, repeatable.
type inputFlags []string

func (f *inputFlags) String() string { return strings.Join(*f, " ") }

func (f *inputFlags) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return errors.New(`want KEY=JSON or KEY=@FILE`)
	}
	*f = append(*f, v)
	return nil
}

// answers are the inputs given on the command line, by key.
type answers struct {
	byKey map[string]json.RawMessage
	from  map[string]string // where each came from, for the log
	used  map[string]bool
}

// loadAnswers reads --inputs file (if any), then the --input flags.
func loadAnswers(file string, flags []string) (*answers, error) {
	a := &answers{byKey: map[string]json.RawMessage{}, from: map[string]string{}, used: map[string]bool{}}
	if file != "" {
		b, err := readInputFile(file)
		if err != nil {
			return nil, fmt.Errorf("--inputs: %w", err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil || m == nil {
			return nil, fmt.Errorf("--inputs %s: want a JSON object of KEY: answer", file)
		}
		for k, v := range m {
			if err := checkAnswer(v); err != nil {
				return nil, fmt.Errorf("--inputs %s: %q: %w", file, k, err)
			}
			a.byKey[k], a.from[k] = v, "--inputs "+file
		}
	}
	for _, f := range flags {
		k, v, _ := strings.Cut(f, "=")
		from := "--input " + k
		if name, ok := strings.CutPrefix(v, "@"); ok {
			b, err := readInputFile(name)
			if err != nil {
				return nil, fmt.Errorf("--input %s: %w", k, err)
			}
			v, from = string(b), "--input "+k+"=@"+name
		}
		raw := json.RawMessage(strings.TrimSpace(v))
		if err := checkAnswer(raw); err != nil {
			return nil, fmt.Errorf("--input %s: %w", k, err)
		}
		a.byKey[k], a.from[k] = raw, from
	}
	return a, nil
}

// readInputFile reads an answer file ("-": standard input), bounded so a
// wrong path (a device, a log) fails instead of filling memory.
func readInputFile(name string) ([]byte, error) {
	const max = 16 << 20
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err == nil && len(b) > max {
		err = fmt.Errorf("%s is over %d bytes", name, max)
	}
	return b, err
}

// checkAnswer: every result an input request can have is a JSON object.
func checkAnswer(v json.RawMessage) error {
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil || m == nil {
		return errors.New("the answer is not a JSON object")
	}
	return nil
}

// unused lists the keys given but never asked for, sorted.
func (a *answers) unused() []string {
	var ks []string
	for k := range a.byKey {
		if !a.used[k] {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

// inputRequired is an InputRequiredResult as call reads it.
type inputRequired struct {
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState json.RawMessage `json:"requestState"`
}

// callWithInputs runs method and answers its input_required rounds from
// a, describing each request to w (stderr). params is the request's
// params object.
func callWithInputs(ctx context.Context, c *client.Client, method string, params json.RawMessage, opts *client.CallOptions, a *answers, w io.Writer) (*client.Result, error) {
	asked := map[string]bool{}
	for round := 1; ; round++ {
		res, err := c.Call(ctx, method, params, opts)
		if err != nil || res.Type != "input_required" {
			return res, err
		}
		var ir inputRequired
		if err := json.Unmarshal(res.Raw, &ir); err != nil || len(ir.InputRequests) == 0 && ir.RequestState == nil {
			return nil, errors.New("the server answered input_required without input requests or a requestState it could read")
		}
		if round > maxCallRounds {
			return nil, fmt.Errorf("the server still asks for input after %d rounds (MRTR-12)", maxCallRounds)
		}
		keys := make([]string, 0, len(ir.InputRequests))
		for k := range ir.InputRequests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var missing, again []string
		out := map[string]json.RawMessage{}
		for _, k := range keys {
			r := ir.InputRequests[k]
			describeInput(w, k, r.Method, r.Params)
			switch v, ok := a.byKey[k]; {
			case asked[k]:
				again = append(again, k)
			case !ok:
				missing = append(missing, k)
			default:
				fmt.Fprintf(w, "  answered from %s\n", termSafe(a.from[k]))
				out[k] = v
				a.used[k] = true
			}
			asked[k] = true
		}
		if len(again) > 0 {
			return nil, &safeError{"the server asked again for " + quoteKeys(again) + " after it was answered: it did not take the answer (see the request above)"}
		}
		if len(missing) > 0 {
			return nil, needsInput(ir, missing)
		}
		if params, err = retryParams(params, out, ir.RequestState); err != nil {
			return nil, err
		}
	}
}

// retryParams returns params with inputResponses and the requestState
// byte for byte (MRTR-05, MRTR-06).
func retryParams(params json.RawMessage, responses map[string]json.RawMessage, state json.RawMessage) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &m); err != nil || m == nil {
			return nil, errors.New("the call's params are not a JSON object")
		}
	}
	delete(m, "inputResponses")
	delete(m, "requestState")
	if len(responses) > 0 { // only a state came back: retry with it alone (MRTR-05)
		r, err := json.Marshal(responses)
		if err != nil {
			return nil, err
		}
		m["inputResponses"] = r
	}
	if state != nil {
		m["requestState"] = state
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep the state's bytes
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// needsInput is the error for keys nobody answered: what to pass, with a
// template of each answer.
func needsInput(ir inputRequired, missing []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "the server needs input that was not given: %s. Answer with", quoteKeys(missing))
	for _, k := range missing {
		r := ir.InputRequests[k]
		fmt.Fprintf(&b, "\n  --input '%s=%s'", termSafe(k), answerTemplate(r.Method, r.Params))
	}
	b.WriteString("\n(or --input KEY=@FILE, or --inputs FILE holding {\"KEY\": answer, …}; an elicitation is refused with {\"action\":\"decline\"})")
	return &safeError{b.String()}
}

// safeError is an error whose text is ours, what it quotes of the server
// already made safe: it is printed as it is, lines included.
type safeError struct{ msg string }

func (e *safeError) Error() string { return e.msg }

func quoteKeys(ks []string) string {
	q := make([]string, len(ks))
	for i, k := range ks {
		q[i] = `"` + termSafe(k) + `"`
	}
	return strings.Join(q, ", ")
}

// elicitView and samplingView are the params call shows.
type elicitView struct {
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
	URL             string          `json:"url"`
}

type samplingView struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	MaxTokens        int             `json:"maxTokens"`
	SystemPrompt     string          `json:"systemPrompt"`
	ModelPreferences json.RawMessage `json:"modelPreferences"`
	Tools            []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// describeInput writes what the request key asks for, every server
// string made safe for a terminal.
func describeInput(w io.Writer, key, method string, params json.RawMessage) {
	const in = "            "
	k := termSafe(key)
	switch method {
	case mrtr.MethodElicit:
		var p elicitView
		_ = json.Unmarshal(params, &p)
		if p.Mode == mrtr.ModeURL {
			fmt.Fprintf(w, "input \"%s\": %s, a URL for the user to visit\n", k, method)
			fmt.Fprintf(w, "  message:  %s\n", termLines(p.Message, in))
			fmt.Fprintf(w, "  url:      %s\n", termSafe(p.URL))
			return
		}
		fmt.Fprintf(w, "input \"%s\": %s, a form for the user\n", k, method)
		fmt.Fprintf(w, "  message:  %s\n", termLines(p.Message, in))
		for _, f := range schemaProperties(p.RequestedSchema, false) {
			req := ""
			if f.required {
				req = ", required"
			}
			fmt.Fprintf(w, "  field:    %s (%s%s)\n", termSafe(f.name), termSafe(f.typ), req)
		}
		fmt.Fprintf(w, "  schema:   %s\n", compactSafe(p.RequestedSchema))
	case mrtr.MethodSample:
		var p samplingView
		_ = json.Unmarshal(params, &p)
		fmt.Fprintf(w, "input \"%s\": %s, a completion from the client's model (maxTokens %d)\n", k, method, p.MaxTokens)
		if p.SystemPrompt != "" {
			fmt.Fprintf(w, "  system:   %s\n", termLines(p.SystemPrompt, in))
		}
		for _, m := range p.Messages {
			var c struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(m.Content, &c) == nil && c.Type == "text" {
				fmt.Fprintf(w, "  %-9s %s\n", termSafe(m.Role)+":", termLines(c.Text, in))
			} else {
				fmt.Fprintf(w, "  %-9s %s\n", termSafe(m.Role)+":", compactSafe(m.Content))
			}
		}
		if len(p.ModelPreferences) > 0 {
			fmt.Fprintf(w, "  model:    %s\n", compactSafe(p.ModelPreferences))
		}
		for _, t := range p.Tools {
			fmt.Fprintf(w, "  tool:     %s\n", termSafe(t.Name))
		}
	case mrtr.MethodListRoots:
		fmt.Fprintf(w, "input \"%s\": %s, the client's roots (directories or files the server may use)\n", k, method)
	default:
		fmt.Fprintf(w, "input \"%s\": %s (not a kind this revision defines)\n", k, termSafe(method))
		fmt.Fprintf(w, "  params:   %s\n", compactSafe(params))
	}
}

// compactSafe is raw JSON on one line, safe for a terminal.
func compactSafe(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return termSafe(string(raw))
	}
	return string(jsonSafe(b.Bytes()))
}

// answerTemplate is an answer of the right shape for the request, with
// placeholders to fill in.
func answerTemplate(method string, params json.RawMessage) string {
	switch method {
	case mrtr.MethodElicit:
		var p elicitView
		_ = json.Unmarshal(params, &p)
		if p.Mode == mrtr.ModeURL {
			return `{"action":"accept"}`
		}
		content := map[string]any{}
		for _, f := range schemaProperties(p.RequestedSchema, false) {
			switch {
			case len(f.enum) > 0:
				content[f.name] = f.enum[0]
			case f.typ == "boolean":
				content[f.name] = false
			case f.typ == "number" || f.typ == "integer":
				content[f.name] = 0
			case f.typ == "array":
				content[f.name] = []string{}
			default:
				content[f.name] = "…"
			}
		}
		b, _ := json.Marshal(map[string]any{"action": "accept", "content": content})
		return string(jsonSafe(b))
	case mrtr.MethodSample:
		return `{"role":"assistant","content":{"type":"text","text":"…"},"model":"…"}`
	case mrtr.MethodListRoots:
		return `{"roots":[{"uri":"file:///…"}]}`
	}
	return `{…}`
}
