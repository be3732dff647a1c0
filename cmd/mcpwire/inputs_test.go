package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDescribeInput: each kind of input request is shown with what it
// asks (MRTR-03), and nothing the server wrote reaches the terminal raw.
func TestDescribeInput(t *testing.T) {
	hostileJSON, _ := json.Marshal(hostile)
	for i, v := range []struct {
		key, method, params string
		want                []string
	}{
		0: {"user_name", "elicitation/create",
			`{"mode":"form","message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name"]}}`,
			[]string{`input "user_name": elicitation/create, a form for the user`, "message:  What is your name?",
				"field:    age (integer)", "field:    name (string, required)", `schema:   {"type":"object","properties":`}},
		1: {"link", "elicitation/create", `{"mode":"url","message":"Link your account","url":"https://example.com/x"}`,
			[]string{`input "link": elicitation/create, a URL for the user to visit`, "url:      https://example.com/x"}},
		2: {"q", "sampling/createMessage",
			`{"messages":[{"role":"user","content":{"type":"text","text":"Capital of France?"}},{"role":"user","content":{"type":"image","data":"AA==","mimeType":"image/png"}}],"maxTokens":100,"systemPrompt":"Be brief.","modelPreferences":{"hints":[{"name":"haiku"}]},"tools":[{"name":"lookup","inputSchema":{}}]}`,
			[]string{`input "q": sampling/createMessage, a completion from the client's model (maxTokens 100)`, "system:   Be brief.",
				"user:     Capital of France?", `user:     {"type":"image","data":"AA==","mimeType":"image/png"}`,
				`model:    {"hints":[{"name":"haiku"}]}`, "tool:     lookup"}},
		3: {"r", "roots/list", `{}`, []string{`input "r": roots/list, the client's roots`}},
		4: {"x", "tasks/whatever", `{"a":1}`, []string{`input "x": tasks/whatever (not a kind this revision defines)`, `params:   {"a":1}`}},
		// Hostile text everywhere: key, message, schema, URL, prompts.
		5: {"k\x1b[31m", "elicitation/create",
			`{"message":` + string(hostileJSON) + `,"requestedSchema":{"type":"object","properties":{"f\u001b]0;x\u0007":{"type":"string","description":` + string(hostileJSON) + `}}}}`,
			[]string{`input "k\x1b[31m"`, `\x1b[2J`, `\u202egnp.exe`, `field:    f\x1b]0;x\x07 (string)`}},
		6: {"u", "elicitation/create", `{"mode":"url","message":"m","url":` + string(hostileJSON) + `}`, []string{`url:      ok é ✓ 日本 😀 \x1b[2J`}},
		7: {"s", "sampling/createMessage", `{"messages":[{"role":"user","content":{"type":"text","text":` + string(hostileJSON) + `}}],"systemPrompt":"line 1\nline 2"}`,
			[]string{"user:     ok é", `\u2028`, "system:   line 1\n            line 2"}},
	} {
		var b bytes.Buffer
		describeInput(&b, v.key, v.method, json.RawMessage(v.params))
		out := b.String()
		for _, w := range v.want {
			if !strings.Contains(out, w) {
				t.Errorf("%d: missing %q in\n%s", i, w, out)
			}
		}
		if !printable(out) {
			t.Errorf("%d: a raw control or format character:\n%q", i, out)
		}
	}
}

func TestAnswerTemplate(t *testing.T) {
	for i, v := range []struct{ method, params, want string }{
		0: {"elicitation/create", `{"message":"m","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer"},"ok":{"type":"boolean"},"c":{"type":"string","enum":["red","blue"]},"tags":{"type":"array"}}}}`,
			`{"action":"accept","content":{"c":"red","n":0,"name":"…","ok":false,"tags":[]}}`},
		1: {"elicitation/create", `{"mode":"url","message":"m","url":"u"}`, `{"action":"accept"}`},
		2: {"sampling/createMessage", `{}`, `{"role":"assistant","content":{"type":"text","text":"…"},"model":"…"}`},
		3: {"roots/list", ``, `{"roots":[{"uri":"file:///…"}]}`},
	} {
		if got := answerTemplate(v.method, json.RawMessage(v.params)); got != v.want {
			t.Errorf("%d: %s, want %s", i, got, v.want)
		}
	}
}

func TestLoadAnswers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	file := write("answers.json", `{"a":{"action":"decline"},"b":{"roots":[]}}`)
	one := write("one.json", `{"action":"accept","content":{"name":"Ada"}}`)
	a, err := loadAnswers(file, []string{"b=@" + one, `c={"action":"cancel"}`})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"a": `{"action":"decline"}`, "b": `{"action":"accept","content":{"name":"Ada"}}`, "c": `{"action":"cancel"}`} {
		if got := string(a.byKey[k]); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
	if a.from["b"] != "--input b=@"+one || a.from["a"] != "--inputs "+file {
		t.Errorf("from: %v", a.from)
	}
	for i, v := range []struct {
		file  string
		flags []string
		want  string
	}{
		0: {write("arr", `[1]`), nil, "want a JSON object"},
		1: {write("num", `{"a":1}`), nil, `"a": the answer is not a JSON object`},
		2: {"", []string{"a=nope"}, "--input a: the answer is not a JSON object"},
		3: {"", []string{"a=@" + filepath.Join(dir, "missing")}, "--input a: open"},
		4: {filepath.Join(dir, "missing"), nil, "--inputs: open"},
	} {
		if _, err := loadAnswers(v.file, v.flags); err == nil || !strings.Contains(err.Error(), v.want) {
			t.Errorf("%d: %v, want %q", i, err, v.want)
		}
	}
	var f inputFlags
	for _, bad := range []string{"nokey", "=x"} {
		if f.Set(bad) == nil {
			t.Errorf("--input %q accepted", bad)
		}
	}
}

func TestRetryParams(t *testing.T) {
	p, err := retryParams(json.RawMessage(`{"name":"t","arguments":{"x":"<&>"},"inputResponses":{"old":{}},"requestState":"stale"}`),
		map[string]json.RawMessage{"k": json.RawMessage(`{"action":"accept"}`)}, json.RawMessage(`"st<&>.x"`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"arguments":{"x":"<&>"},"inputResponses":{"k":{"action":"accept"}},"name":"t","requestState":"st<&>.x"}`
	if string(p) != want {
		t.Errorf("got  %s\nwant %s", p, want)
	}
	// No answers (a result with only a state): the retry carries the state
	// alone.
	p, err = retryParams(json.RawMessage(`{"name":"t","inputResponses":{"old":{}}}`), nil, json.RawMessage(`"s"`))
	if err != nil || string(p) != `{"name":"t","requestState":"s"}` {
		t.Errorf("state only: %s %v", p, err)
	}
}

// TestCallInputs: `mcpwire call` shows a server's input requests on
// stderr, answers them from --input and --inputs through every round, and
// without an answer names the --input it needs and exits 1 (issue 19).
func TestCallInputs(t *testing.T) {
	tgt := tcpServer(t)
	dir := t.TempDir()

	out, errOut, code := mcpwire(t, "call", tgt, "test_input_required_result_elicitation")
	if code != 1 || out != "" || !strings.Contains(errOut, `input "user_name": elicitation/create, a form for the user`) ||
		!strings.Contains(errOut, "message:  What is your name?") || !strings.Contains(errOut, `schema:   {"type":"object"`) ||
		!strings.Contains(errOut, `mcpwire: the server needs input that was not given: "user_name". Answer with`) ||
		!strings.Contains(errOut, `--input 'user_name={"action":"accept","content":{"name":"…"}}'`) {
		t.Fatalf("unanswered: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	out, errOut, code = mcpwire(t, "call", "--input", `user_name={"action":"accept","content":{"name":"Ada"}}`, tgt, "test_input_required_result_elicitation")
	if code != 0 || !strings.Contains(out, `"Hello, Ada!"`) || !strings.Contains(errOut, "answered from --input user_name") {
		t.Fatalf("answered: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}

	// Every kind in one round, all missing: all are shown and named.
	_, errOut, code = mcpwire(t, "call", tgt, "test_input_required_result_multiple_inputs")
	if code != 1 || !strings.Contains(errOut, `"client_roots", "greeting", "user_name"`) ||
		!strings.Contains(errOut, "user:     Generate a greeting") || !strings.Contains(errOut, "roots/list") {
		t.Fatalf("multiple unanswered: exit %d\nstderr %s", code, errOut)
	}
	answers := filepath.Join(dir, "answers.json")
	if err := os.WriteFile(answers, []byte(`{
		"user_name": {"action":"accept","content":{"name":"Ada"}},
		"greeting": {"role":"assistant","content":{"type":"text","text":"Hi there"},"model":"m"},
		"client_roots": {"roots":[{"uri":"file:///src"}]},
		"step1": {"action":"accept","content":{"name":"Ada"}},
		"step2": {"action":"accept","content":{"color":"blue"}}
	}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = mcpwire(t, "call", "--inputs", answers, tgt, "test_input_required_result_multiple_inputs")
	if code != 0 || !strings.Contains(out, `All inputs received: name=Ada, greeting=\"Hi there\", roots=1`) ||
		!strings.Contains(errOut, `note: the server did not ask for input "step1"`) {
		t.Fatalf("multiple answered: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	// Two rounds from one file; --input wins over it, from a file of its own.
	green := filepath.Join(dir, "green.json")
	if err := os.WriteFile(green, []byte(`{"action":"accept","content":{"color":"green"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = mcpwire(t, "call", "--inputs", answers, "--input", "step2=@"+green, tgt, "test_input_required_result_multi_round")
	if code != 0 || !strings.Contains(out, "Ada's favorite color is green") || strings.Count(errOut, "answered from") != 2 {
		t.Fatalf("multi-round: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	// Prompts too.
	out, errOut, code = mcpwire(t, "call", "--input", `user_context={"action":"accept","content":{"context":"tests"}}`,
		tgt, "prompts/get", `{"name":"test_input_required_result_prompt"}`)
	if code != 0 || !strings.Contains(out, "Context: tests") {
		t.Fatalf("prompt: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	// An answer the server refuses (-32602) is an error; an empty name is
	// asked for again, which call reports instead of going round.
	out, errOut, code = mcpwire(t, "call", "--input", `user_name={"action":"maybe"}`, tgt, "test_input_required_result_elicitation")
	if code != 1 || out != "" || !strings.Contains(errOut, "-32602") || !strings.Contains(errOut, "inputResponses.user_name") {
		t.Fatalf("refused answer: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	_, errOut, code = mcpwire(t, "call", "--input", `user_name={"action":"accept","content":{"name":""}}`, tgt, "test_input_required_result_elicitation")
	if code != 1 || !strings.Contains(errOut, `the server asked again for "user_name" after it was answered`) {
		t.Fatalf("asked again: exit %d\nstderr %s", code, errOut)
	}
	// What the call declares decides what the server may ask (MRTR-04).
	_, errOut, code = mcpwire(t, "call", "--capabilities", `{"roots":{}}`, tgt, "test_input_required_result_capabilities")
	if code != 1 || strings.Contains(errOut, `input "user_name"`) || !strings.Contains(errOut, `input "client_roots"`) {
		t.Fatalf("capabilities: exit %d\nstderr %s", code, errOut)
	}
	out, _, code = mcpwire(t, "call", "--capabilities", `{}`, tgt, "test_input_required_result_capabilities")
	if code != 0 || !strings.Contains(out, "No declared client capability") {
		t.Fatalf("no capabilities: exit %d\nstdout %s", code, out)
	}

	// A result carrying characters that would act on a terminal is
	// printed escaped, as the same JSON value.
	out, _, code = mcpwire(t, "call", tgt, "echo", `{"text":"a\u202eb\u009bc\u001b[2J ✓"}`)
	if code != 0 || !printable(out) || !strings.Contains(out, `a\u202eb\u009bc\u001b[2J ✓`) {
		t.Fatalf("echo of control characters: exit %d\nstdout %q", code, out)
	}
}
