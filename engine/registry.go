package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
)

// ToolHandler runs a tools/call. It sets the result with one of the Call's
// result methods (Text, TextBytes, ErrorText, Return, InputRequired) and
// returns nil, or returns an error: a *codec.Error becomes a JSON-RPC error
// response; any other error becomes a tool result with isError true whose
// text is the error's message.
type ToolHandler func(c *Call) error

// ResourceHandler serves resources/read for one resource or template. It
// sets the result with Call.Return(ReadResourceResult{...}) or returns an
// error (ErrResourceNotFound(uri) for an unknown resource). vars holds the
// template variables matched in the URI (nil for plain resources).
type ResourceHandler func(c *Call, uri string, vars map[string]string) error

// PromptHandler serves prompts/get: Call.Return(PromptResult{...}).
type PromptHandler func(c *Call) error

// CompletionHandler serves completion/complete: Call.Return(CompleteResult{...}).
type CompletionHandler func(c *Call) error

// Tool describes a tool and its handler.
type Tool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the JSON Schema of the arguments (a JSON object).
	// Default {"type":"object"}; the typed AddTool infers it from its In
	// type. AddTool compiles it (an invalid schema, or one that refers to
	// an external document, is an error), and every tools/call's
	// arguments are checked against it before the handler runs: arguments
	// that fail it are answered with a tool result, isError true, naming
	// each failing path and rule on a line of its own, so the model can
	// correct the call (SEP-1303; see args.go); arguments that are not a
	// JSON object are -32602.
	InputSchema json.RawMessage
	// OutputSchema, when set, is advertised in tools/list: the schema of
	// the result's structuredContent. The typed AddTool infers it from its
	// Out type.
	OutputSchema json.RawMessage
	// ValidateOutput checks a typed tool's result (AddTool[In, Out])
	// against OutputSchema before it is sent; one that fails is answered
	// -32603, logged and counted (Stats.InvalidOutputs), never sent. It
	// costs a decode and a validation per call: turn it on in tests, or
	// for every typed tool with Config.ValidateOutput.
	ValidateOutput bool
	// Annotations is advertised as is (a JSON object), when set.
	Annotations json.RawMessage
	// RequiredClientCapabilities names top-level client capabilities
	// ("sampling", "elicitation", "roots", ...) that this request's
	// clientCapabilities must declare; otherwise the call is refused with
	// -32021 and data.requiredCapabilities (META-08).
	RequiredClientCapabilities []string
	Handler                    ToolHandler
	// Inline runs the handler on the transport's reading goroutine instead
	// of a worker: no hand-off, so a trivial handler (no I/O, no waiting)
	// costs less. While it runs, the connection reads nothing else, so it
	// cannot be cancelled mid-way: keep it to work measured in microseconds.
	Inline bool
	// Timeout cancels the handler and answers -32603 "Request timed out"
	// when the call runs this long without sending progress; each progress
	// notification restarts it, up to MaxTimeout from the start (default
	// 4 × Timeout). 0: Config.Timeout.
	Timeout, MaxTimeout time.Duration
	// RatePerPrincipal is the rate of calls of this tool one caller may
	// sustain, in calls per second with bursts of RateBurst (default: one
	// second's worth, rounded up), on top of Config.RatePerPrincipal: a
	// call over it is refused with -32603, HTTP 429 and Retry-After
	// (LimitStats.ToolRatePerPrincipal), and spends none of the caller's
	// other limits. The caller is the one Config.MaxListensPerPrincipal
	// names. 0 or negative: no rate of the tool's own.
	RatePerPrincipal float64
	RateBurst        int
	// SkipValidation leaves the arguments unchecked: the handler validates
	// what it reads itself (ArgBytes, ArgString, Bind). The schema is then
	// not compiled either, only checked to be a JSON object, so AddTool
	// does not report what the validator would refuse. For the fastest
	// paths: a flat schema (typed properties, required) costs tens of
	// nanoseconds and no allocation per call, any other about 2-4 µs and
	// 15 allocations for a small object (BenchmarkArgCheck).
	SkipValidation bool

	args         *argSchema          // compiled InputSchema, nil with SkipValidation
	bindings     []mcp.HeaderBinding // x-mcp-header annotations, computed by AddTool
	bindingNames []string            // their argument names when all are top level
	// bare: Inline, and no timeout applies (neither Timeout nor
	// Config.Timeout); set by addTool. StartInline tests it alone.
	bare bool
}

// Resource describes a concrete resource.
type Resource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MimeType    string
	Handler     ResourceHandler
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template. In a level-1 template ("test://template/{id}/data") each {var}
// matches one or more characters other than '/', as they are (not
// percent-decoded). Templates with operators or modifiers
// ("file:///{+path}", "search://items{?q,lang}", "doc://{id}{#section}")
// are matched by github.com/yosida95/uritemplate/v3, with percent-decoded
// values (see uritemplate.go).
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Title       string
	Description string
	MimeType    string
	Handler     ResourceHandler
}

// Prompt describes a prompt and its handler.
type Prompt struct {
	Name        string
	Title       string
	Description string
	// Arguments are advertised in prompts/list and enforced on
	// prompts/get before the handler runs: a request without a Required
	// argument, or with a declared argument that is not a string, is
	// answered -32602 naming it ("Invalid arguments: arguments.name:
	// required"), counted in Stats.InvalidArguments. Arguments not
	// declared reach the handler unchecked. The typed AddPrompt infers
	// them from its In type.
	Arguments []mcp.PromptArgument
	// RequiredClientCapabilities: as for Tool (META-08).
	RequiredClientCapabilities []string
	Handler                    PromptHandler
}

// checkArgs enforces p's declared Arguments on the raw prompts/get
// arguments (nil when absent): each required one present, each present one
// a string. Nil when they pass; no allocation then for up to maxFlat
// declared arguments.
func (p *Prompt) checkArgs(args []byte) *codec.Error {
	if len(p.Arguments) == 0 {
		return nil
	}
	if !argsObject(args) {
		return errArgsNotObject
	}
	var names [maxFlat]string
	var arr [maxFlat][]byte
	var ns []string
	var vals [][]byte
	if len(p.Arguments) <= maxFlat {
		ns, vals = names[:0], arr[:len(p.Arguments)]
	} else {
		vals = make([][]byte, len(p.Arguments))
	}
	for _, a := range p.Arguments {
		ns = append(ns, a.Name)
	}
	if args != nil {
		if err := codec.LookupMembers(args, ns, vals); err != nil {
			return codec.NewError(codec.CodeInvalidParams, "Invalid params: arguments are not a valid JSON object")
		}
	} else {
		clear(vals)
	}
	var e *ArgumentsError
	for i, a := range p.Arguments {
		var what string
		switch v := vals[i]; {
		case v == nil && a.Required:
			what = ": required"
		case v != nil && rawKind(v) != "string":
			what = ": expected string, got " + rawKind(v)
		default:
			continue
		}
		if e == nil {
			e = &ArgumentsError{}
		}
		var b strings.Builder
		b.WriteString("arguments")
		writeSegment(&b, a.Name)
		e.add(b.String() + what)
	}
	if e == nil {
		return nil
	}
	return e.rpcError()
}

// The list entries (package mcp) the cached list results are built from.

func (t *Tool) listEntry() mcp.Tool {
	return mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations}
}

func (r *Resource) listEntry() mcp.Resource {
	return mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MimeType: r.MimeType}
}

func (t *ResourceTemplate) listEntry() mcp.ResourceTemplate {
	return mcp.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description, MimeType: t.MimeType}
}

func (p *Prompt) listEntry() mcp.Prompt {
	return mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: p.Arguments}
}

var errNoHandler = errors.New("engine: handler is nil")

func (t *Tool) validate() error {
	if t.Name == "" {
		return errors.New("engine: tool name is empty")
	}
	if t.Handler == nil {
		return fmt.Errorf("engine: tool %q: %w", t.Name, errNoHandler)
	}
	if len(t.InputSchema) == 0 {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if !json.Valid(t.InputSchema) || strings.TrimSpace(string(t.InputSchema))[0] != '{' {
		return fmt.Errorf("engine: tool %q: inputSchema is not a JSON object", t.Name)
	}
	for _, raw := range []json.RawMessage{t.OutputSchema, t.Annotations} {
		if len(raw) != 0 && !json.Valid(raw) {
			return fmt.Errorf("engine: tool %q: invalid JSON in outputSchema or annotations", t.Name)
		}
	}
	t.args = nil
	if !t.SkipValidation {
		a, err := compileArgSchema(t.InputSchema)
		if err != nil {
			return fmt.Errorf("engine: tool %q: inputSchema: %s", t.Name, firstLine(err.Error()))
		}
		t.args = a
	}
	b, err := mcp.ParseHeaderBindings(t.InputSchema)
	if err != nil {
		return fmt.Errorf("engine: tool %q: %w", t.Name, err)
	}
	t.bindings = b
	t.bindingNames = nil
	flat := len(b) > 0
	for _, x := range b {
		flat = flat && len(x.Path) == 1
	}
	if flat {
		for _, x := range b {
			t.bindingNames = append(t.bindingNames, x.Path[0])
		}
	}
	return nil
}

// firstLine keeps the first line of a multi-line library error.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// template matching ------------------------------------------------------
//
// A template whose expressions are all simple {name} (RFC 6570 level 1) is
// matched by the literal-splitting matcher below, as before: each variable
// spans one or more characters up to the next literal, never '/', and is
// not percent-decoded. Any other template goes to uritemplate.go.

type uriTemplate struct {
	lits []string // literal pieces; len(lits) == len(vars)+1
	vars []string
	lib  *libTemplate // set for templates beyond level 1
}

func parseTemplate(s string) (uriTemplate, error) {
	if !isLevel1(s) {
		lt, err := parseLibTemplate(s)
		if err != nil {
			return uriTemplate{}, err
		}
		return uriTemplate{lib: lt}, nil
	}
	var t uriTemplate
	rest := s
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return t, fmt.Errorf("engine: bad URI template %q", s)
			}
			t.lits = append(t.lits, rest)
			return t, nil
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return t, fmt.Errorf("engine: bad URI template %q", s)
		}
		name := rest[i+1 : i+j]
		if name == "" || strings.ContainsAny(name, "{/") {
			return t, fmt.Errorf("engine: bad URI template variable in %q", s)
		}
		t.lits = append(t.lits, rest[:i])
		t.vars = append(t.vars, name)
		rest = rest[i+j+1:]
	}
}

// isLevel1 reports whether every expression of s is a single variable
// without operator or modifier ({id}, not {+path}, {?q,lang}, {x:3} or
// {list*}). Malformed templates count as level 1 so that the matcher below
// reports them as it always has.
func isLevel1(s string) bool {
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			return true
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return true
		}
		expr := s[i+1 : i+j]
		if expr != "" && (strings.IndexByte(rfc6570Operators, expr[0]) >= 0 || strings.ContainsAny(expr, ",:*")) {
			return false
		}
		s = s[i+j+1:]
	}
}

// rfc6570Operators are the operator characters of RFC 6570 §2.2 (levels 2
// and 3, and those reserved for future extensions).
const rfc6570Operators = "+#./;?&=,!@|"

// match reports whether uri matches the template and returns the variables.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	if t.lib != nil {
		return t.lib.match(uri)
	}
	if !strings.HasPrefix(uri, t.lits[0]) {
		return nil, false
	}
	rest := uri[len(t.lits[0]):]
	var vars map[string]string
	for i, name := range t.vars {
		next := t.lits[i+1]
		// The variable spans up to the next literal (or the end) and never
		// crosses '/'.
		end := len(rest)
		if next != "" {
			end = strings.Index(rest, next)
			if end < 0 {
				return nil, false
			}
		} else if i+1 < len(t.vars) {
			return nil, false // two adjacent variables are ambiguous
		}
		val := rest[:end]
		if val == "" || strings.IndexByte(val, '/') >= 0 {
			return nil, false
		}
		if vars == nil {
			vars = make(map[string]string, len(t.vars))
		}
		vars[name] = val
		rest = rest[end+len(next):]
	}
	if len(t.vars) == 0 && rest != "" {
		return nil, false
	}
	return vars, rest == ""
}
