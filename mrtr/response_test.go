package mrtr_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/engine"
	"github.com/mcpwire/mcpwire/mrtr"
)

func parse(t *testing.T, raw string) mrtr.InputResponses {
	t.Helper()
	r, err := mrtr.ParseResponses([]byte(raw))
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return r
}

// wantRefused checks an *Error with reason and a -32602 message
// containing msg.
func wantRefused(t *testing.T, what string, err, reason error, msg string) {
	t.Helper()
	var ce *codec.Error
	if !errors.Is(err, reason) || !errors.As(err, &ce) || ce.Code != codec.CodeInvalidParams ||
		!strings.HasPrefix(ce.Message, "Invalid params: inputResponses") || !strings.Contains(ce.Message, msg) {
		t.Errorf("%s: %v, want %v %q", what, err, reason, msg)
	}
}

func TestParseResponses(t *testing.T) {
	for _, bad := range []string{``, `null`, `[]`, `"x"`, `1`, `{`, `{"a":}`} {
		_, err := mrtr.ParseResponses([]byte(bad))
		var ce *codec.Error
		if !errors.Is(err, mrtr.ErrResponsesMalformed) || !errors.As(err, &ce) || ce.Message != "Invalid params: inputResponses must be an object" {
			t.Errorf("%q: %v", bad, err)
		}
	}
	r := parse(t, `{"a":{"action":"cancel"},"b":12345,"c":null}`)
	if r.Len() != 3 || !r.Has("a") || !r.Has("c") || r.Has("d") {
		t.Errorf("Len %d", r.Len())
	}
	raw, ok := r.Raw("b")
	if !ok || string(raw) != "12345" {
		t.Errorf("Raw b: %s %v", raw, ok)
	}
	var zero mrtr.InputResponses
	if zero.Len() != 0 || zero.Has("a") {
		t.Error("the zero InputResponses is not empty")
	}
	_, err := zero.Elicit("a")
	wantRefused(t, "zero", err, mrtr.ErrResponseMissing, "inputResponses.a is missing")
}

func TestElicit(t *testing.T) {
	r := parse(t, `{
		"ok":      {"action":"accept","content":{"name":"Ada","age":36,"admin":true,"tags":["x","y"]}},
		"url":     {"action":"accept"},
		"nullc":   {"action":"accept","content":null},
		"no":      {"action":"decline","content":{"ignored":1}},
		"cancel":  {"action":"cancel"},
		"num":     12345,
		"arr":     [],
		"noact":   {"content":{}},
		"badact":  {"action":"ACCEPT"},
		"badcont": {"action":"accept","content":"Ada"},
		"actnum":  {"action":1}
	}`)
	ok, err := r.Elicit("ok")
	if err != nil || !ok.Accepted() || ok.Action != mrtr.ActionAccept {
		t.Fatalf("ok: %+v %v", ok, err)
	}
	if name, found := ok.String("name"); !found || name != "Ada" {
		t.Errorf("String(name): %q %v", name, found)
	}
	if _, found := ok.String("age"); found {
		t.Error("String(age) found a number")
	}
	var form struct {
		Name  string   `json:"name"`
		Age   int      `json:"age"`
		Admin bool     `json:"admin"`
		Tags  []string `json:"tags"`
	}
	if err := ok.Decode(&form); err != nil || form.Name != "Ada" || form.Age != 36 || !form.Admin || len(form.Tags) != 2 {
		t.Errorf("Decode: %+v %v", form, err)
	}
	var wrong struct {
		Name int `json:"name"`
	}
	wantRefused(t, "Decode into a mistyped struct", ok.Decode(&wrong), mrtr.ErrResponseMalformed, "inputResponses.ok content does not fit")

	for _, k := range []string{"url", "nullc"} {
		e, err := r.Elicit(k)
		if err != nil || !e.Accepted() || e.Content != nil {
			t.Errorf("%s: %+v %v", k, e, err)
		}
		var m map[string]any
		if err := e.Decode(&m); err != nil || len(m) != 0 {
			t.Errorf("%s: Decode of no content: %v %v", k, m, err)
		}
	}
	if e, err := r.Elicit("no"); err != nil || e.Accepted() || e.Action != mrtr.ActionDecline || e.Content != nil {
		t.Errorf("decline: %+v %v", e, err)
	}
	if e, err := r.Elicit("cancel"); err != nil || e.Action != mrtr.ActionCancel {
		t.Errorf("cancel: %+v %v", e, err)
	}
	for i, v := range []struct {
		key    string
		reason error
		msg    string
	}{
		0: {"missing", mrtr.ErrResponseMissing, "inputResponses.missing is missing"},
		1: {"num", mrtr.ErrResponseMalformed, "inputResponses.num must be an elicitation result"},
		2: {"arr", mrtr.ErrResponseMalformed, "must be an elicitation result"},
		3: {"noact", mrtr.ErrResponseMalformed, "action must be accept, decline or cancel"},
		4: {"badact", mrtr.ErrResponseMalformed, "action must be accept, decline or cancel"},
		5: {"badcont", mrtr.ErrResponseMalformed, "content must be an object"},
		6: {"actnum", mrtr.ErrResponseMalformed, "must be an elicitation result"},
	} {
		_, err := r.Elicit(v.key)
		wantRefused(t, string(rune('0'+i))+" "+v.key, err, v.reason, v.msg)
		if strings.Contains(err.Error(), "Ada") || strings.Contains(err.Error(), "12345") {
			t.Errorf("%d: the message quotes the input: %v", i, err)
		}
	}
}

func TestSampling(t *testing.T) {
	r := parse(t, `{
		"one":   {"role":"assistant","content":{"type":"text","text":"Paris."},"model":"test-model","stopReason":"endTurn"},
		"many":  {"role":"assistant","model":"m","content":[{"type":"text","text":"Par"},{"type":"tool_use","id":"t1","name":"lookup","input":{}},{"type":"text","text":"is"}]},
		"img":   {"role":"assistant","content":{"type":"image","data":"AAAA","mimeType":"image/png"}},
		"norole":{"content":{"type":"text","text":"x"}},
		"badrole":{"role":"system","content":{"type":"text","text":"x"}},
		"nocont":{"role":"assistant"},
		"empty": {"role":"assistant","content":[]},
		"notype":{"role":"assistant","content":{"text":"x"}},
		"strc":  {"role":"assistant","content":"Paris"},
		"num":   7
	}`)
	one, err := r.Sampling("one")
	if err != nil || one.Text() != "Paris." || one.Model != "test-model" || one.StopReason != "endTurn" || one.Role != "assistant" || len(one.Raw) == 0 {
		t.Fatalf("one: %+v %v", one, err)
	}
	many, err := r.Sampling("many")
	if err != nil || len(many.Content) != 3 || many.Text() != "Paris" || many.Content[1].Type != "tool_use" || many.Content[1].Name != "lookup" {
		t.Errorf("many: %+v %v", many, err)
	}
	img, err := r.Sampling("img")
	if err != nil || img.Text() != "" || img.Content[0].MimeType != "image/png" || img.Model != "" {
		t.Errorf("img: %+v %v", img, err)
	}
	for i, v := range []struct {
		key    string
		reason error
		msg    string
	}{
		0: {"missing", mrtr.ErrResponseMissing, "is missing"},
		1: {"norole", mrtr.ErrResponseMalformed, "role must be user or assistant"},
		2: {"badrole", mrtr.ErrResponseMalformed, "role must be user or assistant"},
		3: {"nocont", mrtr.ErrResponseMalformed, "content must be a content block"},
		4: {"empty", mrtr.ErrResponseMalformed, "content must be a content block"},
		5: {"notype", mrtr.ErrResponseMalformed, "content blocks must have a type"},
		6: {"strc", mrtr.ErrResponseMalformed, "content must be a content block"},
		7: {"num", mrtr.ErrResponseMalformed, "must be a sampling result"},
	} {
		_, err := r.Sampling(v.key)
		wantRefused(t, string(rune('0'+i))+" "+v.key, err, v.reason, v.msg)
	}
}

func TestRoots(t *testing.T) {
	r := parse(t, `{
		"two":   {"roots":[{"uri":"file:///a","name":"A"},{"uri":"file:///b"}]},
		"none":  {"roots":[]},
		"nil":   {"roots":null},
		"absent":{},
		"nouri": {"roots":[{"name":"A"}]},
		"str":   {"roots":"file:///a"},
		"arr":   [{"uri":"file:///a"}]
	}`)
	two, err := r.Roots("two")
	if err != nil || len(two) != 2 || two[0] != (mrtr.Root{URI: "file:///a", Name: "A"}) || two[1].URI != "file:///b" {
		t.Fatalf("two: %+v %v", two, err)
	}
	if none, err := r.Roots("none"); err != nil || none == nil || len(none) != 0 {
		t.Errorf("none: %#v %v", none, err)
	}
	for i, v := range []struct {
		key    string
		reason error
		msg    string
	}{
		0: {"missing", mrtr.ErrResponseMissing, "is missing"},
		1: {"nil", mrtr.ErrResponseMalformed, "a roots array"},
		2: {"absent", mrtr.ErrResponseMalformed, "a roots array"},
		3: {"nouri", mrtr.ErrResponseMalformed, "every root must have a uri"},
		4: {"str", mrtr.ErrResponseMalformed, "a roots array"},
		5: {"arr", mrtr.ErrResponseMalformed, "must be a roots result"},
	} {
		_, err := r.Roots(v.key)
		wantRefused(t, string(rune('0'+i))+" "+v.key, err, v.reason, v.msg)
	}
}

func TestDecodeResponse(t *testing.T) {
	r := parse(t, `{"custom":{"answer":42},"bad":{"answer":"x"}}`)
	var v struct {
		Answer int `json:"answer"`
	}
	if err := r.Decode("custom", &v); err != nil || v.Answer != 42 {
		t.Errorf("custom: %+v %v", v, err)
	}
	wantRefused(t, "bad", r.Decode("bad", &v), mrtr.ErrResponseMalformed, "inputResponses.bad does not have the expected form")
	wantRefused(t, "missing", r.Decode("nope", &v), mrtr.ErrResponseMissing, "inputResponses.nope is missing")
	// A key with control characters or of any length stays one short line.
	_, err := r.Elicit("a\x1b[31mb" + strings.Repeat("k", 200))
	if msg := err.Error(); strings.ContainsAny(msg, "\x1b\n") || len(msg) > 140 {
		t.Errorf("message %q", msg)
	}
}

// TestResponsesThroughEngine: Responses reads params.inputResponses; a
// value that is not an object is -32602 before the handler looks at keys,
// and what the handler keeps survives the request.
func TestResponsesThroughEngine(t *testing.T) {
	srv := newEngine(t)
	kept := make(chan mrtr.ElicitResult, 1)
	if err := srv.AddTool(engine.Tool{Name: "t", Handler: func(c *engine.Call) error {
		in, err := mrtr.Responses(c)
		if err != nil {
			return err
		}
		e, err := in.Elicit("k")
		if err != nil {
			return err
		}
		kept <- e
		c.Text(e.Action)
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	c := dial(t, srv, nil)
	c.do("tools/call", `{"name":"t","arguments":{}}`).fails(t, "inputResponses.k is missing")
	c.do("tools/call", `{"name":"t","arguments":{},"inputResponses":null}`).fails(t, "inputResponses must be an object")
	c.do("tools/call", `{"name":"t","arguments":{},"inputResponses":[]}`).fails(t, "inputResponses must be an object")
	c.do("tools/call", `{"name":"t","arguments":{},"inputResponses":{"k":12345}}`).fails(t, "inputResponses.k must be an elicitation result")
	if got := c.do("tools/call", `{"name":"t","arguments":{},"inputResponses":{"k":{"action":"accept","content":{"name":"Ada"}}}}`).text(t); got != "accept" {
		t.Fatalf("accept: %q", got)
	}
	e := <-kept
	c.do("tools/call", `{"name":"t","arguments":{},"inputResponses":{"k":{"action":"accept","content":{"name":"Bob"}}}}`).text(t)
	if name, _ := e.String("name"); name != "Ada" {
		t.Errorf("a kept result changed after its request: %q", name)
	}
}
