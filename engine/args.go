package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/mcpwire/mcpwire/codec"
)

// Tool arguments are checked against the tool's InputSchema before its
// handler runs (tools/call). The schema is compiled once, by AddTool, with
// github.com/santhosh-tekuri/jsonschema/v6: every draft from 4 to 2020-12
// (2020-12 when the schema names none, as MCP says), Go regular expressions
// (RE2: linear time whatever the input), formats as annotations unless the
// draft asserts them, and no loader: a $ref to anything outside the schema
// (a file, a URL) makes AddTool fail instead of reaching out at run time.
//
// Two shapes skip the library on the request path, with the verdict and
// message it would give and no allocation: a schema that accepts any
// object (the default, and tools without arguments: the first byte is
// checked), and a flat schema of typed properties and required names,
// open or closed (args_flat.go). Anything else is decoded
// (codec.DecodeAny) and validated by the library: about 2-4 µs and 15
// allocations for a small object (BenchmarkArgCheck, BenchmarkToolArgs).
//
// Arguments that fail the schema are a tool execution error, not a
// protocol error (SEP-1303, TRANSPORTS.md §1.4): the model must see what
// it got wrong to correct itself. The answer is a tool result with isError
// true whose text names each failing path on a line of its own, the first
// line carrying the prefix every argument error shares:
//
//	Invalid arguments: arguments.b: required
//	arguments.text: expected string, got number
//
// Each line is at most maxArgMessage bytes, at most maxArgPaths paths are
// listed (then "… and N more"), and no line copies the input: a line
// names a path and what the schema wants. Arguments that are not a JSON
// object at all fail the CallToolRequest schema itself and stay -32602.

// maxArgMessage bounds one line of an argument error, and the whole
// message of an argument error answered -32602, in bytes.
const maxArgMessage = 200

// maxArgPaths bounds the failing paths an argument error lists.
const maxArgPaths = 8

// maxArgSegment bounds one member name quoted in an argument path.
const maxArgSegment = 40

// argPrefix starts every argument error, whoever finds it: the schema
// check, Bind, a typed tool's decoding, a prompt's required arguments, or
// a handler through InvalidArguments.
const argPrefix = "Invalid arguments: "

// ArgumentsError is the error of arguments refused before or by a handler:
// one short line per failing path ("arguments.b: required"). In tools/call
// it becomes a tool result with isError true whose text lists the lines
// (SEP-1303) and counts in Stats.InvalidArguments; anywhere else (prompts/get,
// completion/complete…) a -32602 error whose one-line message joins them.
// Bind, typed tools and prompts return it; a handler makes one with
// InvalidArguments.
type ArgumentsError struct {
	lines []string // each bounded, at most maxArgPaths
	more  int      // failures beyond those listed
}

// InvalidArguments returns an ArgumentsError listing problems, each one
// path and what is wrong with it in plain words ("arguments.n: must be at
// most 10"). Keep them free of the argument values: the model and the logs
// see them.
func InvalidArguments(problems ...string) *ArgumentsError {
	e := &ArgumentsError{}
	for _, p := range problems {
		e.add(p)
	}
	if len(e.lines) == 0 {
		e.add("arguments: not valid")
	}
	return e
}

// add appends one failure line, bounded, unless maxArgPaths are listed.
func (e *ArgumentsError) add(line string) {
	if len(e.lines) >= maxArgPaths {
		e.more++
		return
	}
	// One line each, whoever wrote it.
	line = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, line)
	e.lines = append(e.lines, boundMessage(line))
}

// Problems returns the failure lines, without the prefix.
func (e *ArgumentsError) Problems() []string { return append([]string(nil), e.lines...) }

// Error is the text of the tool result: the prefix and the first line,
// then one line per further failure, then how many were left out.
func (e *ArgumentsError) Error() string {
	var b strings.Builder
	for i, l := range e.lines {
		if i == 0 {
			b.WriteString(boundMessage(argPrefix + l))
			continue
		}
		b.WriteByte('\n')
		b.WriteString(boundMessage(l))
	}
	if e.more > 0 {
		b.WriteString("\n… and " + strconv.Itoa(e.more) + " more")
	}
	return b.String()
}

// rpcError is the -32602 form: one line of at most maxArgMessage bytes.
func (e *ArgumentsError) rpcError() *codec.Error {
	msg := argPrefix + strings.Join(e.lines, "; ")
	if e.more > 0 {
		msg += "; … and " + strconv.Itoa(e.more) + " more"
	}
	return codec.NewError(codec.CodeInvalidParams, boundMessage(msg))
}

// argSchema is a tool's compiled InputSchema.
type argSchema struct {
	// anyObject: the schema accepts every JSON object (type object and
	// nothing else that constrains it), so only the first byte is checked.
	anyObject bool
	// flat, when set, checks the common shape of a tool schema on the raw
	// bytes without decoding them (see flatSchema); sch still answers
	// whatever flat leaves undecided.
	flat *flatSchema
	sch  *jsonschema.Schema
	// typed, set only by AddTool's registration of its own handler (never
	// for a Tool registered by Server.AddTool, which compiles a new
	// argSchema), is the typed tool whose handler checks arguments Peek
	// recorded itself, decoding them in the same pass (callTool).
	typed *typedTool
}

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema %q is not loaded", url)
}

// schemaURL names the compiled document; a tool's schema is compiled alone.
const schemaURL = "urn:mcpwire:input-schema"

// compileArgSchema compiles raw, a JSON object.
func compileArgSchema(raw []byte) (*argSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	flat := flatten(doc)
	if flat != nil && len(flat.names) == 0 && !flat.closed {
		// Exactly "a JSON object" ({"type":"object"}, optionally with an
		// empty properties, true additionalProperties, an empty required
		// and annotations): the schemas of tools without arguments, and
		// the default. Nothing to compile.
		return &argSchema{anyObject: true}, nil
	}
	sch, err := compileSchemaDoc(doc)
	if err != nil {
		return nil, err
	}
	return &argSchema{sch: sch, flat: flat}, nil
}

// compileSchemaDoc compiles a decoded schema document alone, with the
// dialect and the loader rules above.
func compileSchemaDoc(doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

// annotationKeys are keywords that never reject an instance.
var annotationKeys = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "title": true,
	"description": true, "examples": true, "default": true,
	"readOnly": true, "writeOnly": true, "deprecated": true,
}

// standardDialect reports whether the schema names no meta-schema, or the
// 2020-12 or draft-07 one: only those take the shortcuts below, so a custom
// dialect always goes through the compiler.
func standardDialect(m map[string]any) bool {
	s, ok := m["$schema"]
	if !ok {
		return true
	}
	switch s {
	case "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema":
		return true
	}
	return false
}

// isAnnotation: annotation keywords, $schema (checked by standardDialect)
// and x- extensions (x-mcp-header) never reject an instance.
func isAnnotation(k string) bool {
	return annotationKeys[k] || strings.HasPrefix(k, "x-")
}

// errArgsNotObject answers arguments that are not a JSON object: the
// request fails the CallToolRequest schema, a protocol error (-32602 in
// TRANSPORTS.md §1.4), not the tool's.
var errArgsNotObject = codec.NewError(codec.CodeInvalidParams, "Invalid params: arguments must be a JSON object")

// argsObject reports whether args (nil when absent) may be checked
// against a schema: absent, or a JSON object.
func argsObject(args []byte) bool {
	return args == nil || firstByte(args) == '{'
}

// check validates the raw arguments (nil when absent: an empty object),
// which the caller has found to be an object (argsObject).
func (a *argSchema) check(args []byte) *ArgumentsError {
	var vals [maxFlat][]byte
	e, _ := a.checkScan(args, &vals)
	return e
}

// checkScan is check, reporting also whether the flat check decided: then
// vals holds each of a.flat.names' raw values (nil: absent).
func (a *argSchema) checkScan(args []byte, vals *[maxFlat][]byte) (e *ArgumentsError, scanned bool) {
	return a.checkPeeked(args, nil, vals)
}

// checkPeeked is checkScan on the arguments of env when env is not nil
// (args is then env.Arguments): the flat check reads the members Peek
// recorded instead of scanning them again (codec.Envelope.ScanArguments).
func (a *argSchema) checkPeeked(args []byte, env *codec.Envelope, vals *[maxFlat][]byte) (e *ArgumentsError, scanned bool) {
	if a.anyObject {
		return nil, false
	}
	if a.flat != nil {
		if e, ok := a.flat.checkFrom(args, env, vals); ok {
			return e, true
		}
	}
	return a.checkCompiled(args), false
}

// checkCompiled validates args with the compiled schema.
func (a *argSchema) checkCompiled(args []byte) *ArgumentsError {
	var v any = map[string]any{}
	if args != nil {
		var err error
		if v, err = codec.DecodeAny(args); err != nil {
			return InvalidArguments("arguments: not valid JSON")
		}
	}
	return validateValue(a.sch, v)
}

// validateValue validates the decoded instance v against sch and lists
// what fails.
func validateValue(sch *jsonschema.Schema, v any) *ArgumentsError {
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return InvalidArguments("arguments: cannot be validated")
	}
	return describe(ve, v)
}

func firstByte(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}

// boundMessage cuts msg to maxArgMessage bytes on a UTF-8 boundary.
func boundMessage(msg string) string {
	if len(msg) <= maxArgMessage {
		return msg
	}
	cut := maxArgMessage - len("…")
	for cut > 0 && msg[cut]&0xc0 == 0x80 {
		cut--
	}
	return msg[:cut] + "…"
}

// failure is one leaf of a validation error, before it is described.
type failure struct {
	loc []string // instance location
	kw  string   // keyword path, to order failures at one location
	msg string   // the line
}

// describe lists the failures of ve: the leaves of its tree, each with its
// path and rule, ordered by instance location then keyword so that equal
// inputs always get the same answer whatever the map order. A failing
// anyOf, oneOf or not is one line: the alternatives' own errors would
// mislead.
func describe(ve *jsonschema.ValidationError, instance any) *ArgumentsError {
	// Every failure is counted; only the first few in describe's order
	// are kept, which is all the answer can list anyway. They are the
	// first by that order, not the first the library reported: it
	// reports an object's members in map order, and an input with more
	// failures than are kept must get the same answer every time. Memory
	// stays bounded at twice keep.
	const keep = 8 * maxArgPaths
	var fs []failure
	total := 0
	trim := func() {
		sort.SliceStable(fs, func(i, j int) bool { return lessFailure(fs[i], fs[j]) })
		if len(fs) > keep {
			clear(fs[keep:])
			fs = fs[:keep]
		}
	}
	emit := func(loc []string, kw, msg string) {
		total++
		if len(fs) == 2*keep {
			trim()
		}
		fs = append(fs, failure{loc, kw, msg})
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch k := e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf, *kind.Not:
			emit(e.InstanceLocation, kwPath(k), path(e.InstanceLocation, instance)+": "+rule(k))
			return
		case *kind.Required:
			for _, m := range k.Missing {
				loc := append(append([]string(nil), e.InstanceLocation...), m)
				emit(loc, "required", path(loc, instance)+": required")
			}
			return
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				loc := append(append([]string(nil), e.InstanceLocation...), p)
				emit(loc, "additionalProperties", path(loc, instance)+": not allowed")
			}
			return
		}
		if len(e.Causes) == 0 {
			emit(e.InstanceLocation, kwPath(e.ErrorKind), path(e.InstanceLocation, instance)+": "+rule(e.ErrorKind))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	trim()
	out := &ArgumentsError{}
	for i, f := range fs {
		if i > 0 && f.msg == fs[i-1].msg && f.kw == fs[i-1].kw && slices.Equal(f.loc, fs[i-1].loc) {
			continue // the same failure reached twice (through $ref or allOf)
		}
		out.add(f.msg)
	}
	out.more += total - len(fs)
	if len(out.lines) == 0 {
		out.add("arguments: not valid")
	}
	return out
}

func kwPath(k jsonschema.ErrorKind) string { return strings.Join(k.KeywordPath(), "/") }

func lessFailure(a, b failure) bool {
	la, lb := a.loc, b.loc
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return lessSegment(la[i], lb[i])
		}
	}
	if len(la) != len(lb) {
		return len(la) < len(lb)
	}
	if a.kw != b.kw {
		return a.kw < b.kw
	}
	return a.msg < b.msg
}

// lessSegment orders two path segments: array indexes (canonical
// non-negative integers) first, by value, so items[2] comes before
// items[10]; anything else after them, as strings. It must be a total
// order: describe and flatSchema sort with it, their inputs come in map
// order, and both must list alike whatever that order was. (Comparing
// "1" and "02" as numbers but "02" and "0A" and "0A" and "1" as strings
// went round in a circle.)
func lessSegment(a, b string) bool {
	na, nb := isIndex(a), isIndex(b)
	if na != nb {
		return na
	}
	if na && len(a) != len(b) {
		return len(a) < len(b) // no leading zeros: shorter is smaller
	}
	return a < b
}

// isIndex reports whether seg is written as an array index is in an
// instance location: 0, or a digit 1-9 followed by digits.
func isIndex(seg string) bool {
	if seg == "" || seg[0] == '0' && len(seg) > 1 {
		return false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return false
		}
	}
	return true
}

// path renders an instance location as arguments.a.b[2], walking instance
// to tell array indexes from member names. Odd member names are quoted and
// long ones cut.
func path(loc []string, instance any) string {
	var b strings.Builder
	b.WriteString("arguments")
	v := instance
	for _, seg := range loc {
		switch x := v.(type) {
		case []any:
			b.WriteByte('[')
			b.WriteString(seg)
			b.WriteByte(']')
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
				v = x[i]
			} else {
				v = nil
			}
			continue
		case map[string]any:
			v = x[seg]
		default:
			v = nil
		}
		writeSegment(&b, seg)
	}
	return b.String()
}

func writeSegment(b *strings.Builder, seg string) {
	cut := false
	if len(seg) > maxArgSegment {
		n := maxArgSegment
		for n > 0 && seg[n]&0xc0 == 0x80 {
			n--
		}
		seg, cut = seg[:n], true
	}
	plain := seg != ""
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if !(c == '_' || c == '-' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			plain = false
			break
		}
	}
	if plain {
		b.WriteByte('.')
		b.WriteString(seg)
	} else {
		// strconv.QuoteToASCII escapes control characters and line
		// breaks: the message stays on one line.
		b.WriteByte('[')
		b.WriteString(strconv.QuoteToASCII(seg))
		b.WriteByte(']')
	}
	if cut {
		b.WriteString("…")
	}
}

// rule says in plain words what the schema wants where it failed: the
// schema's side only (its bounds, its allowed values), never the instance's
// value.
func rule(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return "expected " + strings.Join(k.Want, " or ") + ", got " + k.Got
	case *kind.Enum:
		return "must be one of " + schemaValues(k.Want)
	case *kind.Const:
		return "must be " + schemaValues([]any{k.Want})
	case *kind.Minimum:
		return "must be at least " + ratString(k.Want)
	case *kind.Maximum:
		return "must be at most " + ratString(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be greater than " + ratString(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be less than " + ratString(k.Want)
	case *kind.MultipleOf:
		return "must be a multiple of " + ratString(k.Want)
	case *kind.MinLength:
		return "must be at least " + count(k.Want, "character") + " long"
	case *kind.MaxLength:
		return "must be at most " + count(k.Want, "character") + " long"
	case *kind.MinItems:
		return "must have at least " + count(k.Want, "item")
	case *kind.MaxItems:
		return "must have at most " + count(k.Want, "item")
	case *kind.MinProperties:
		return "must have at least " + count(k.Want, "member")
	case *kind.MaxProperties:
		return "must have at most " + count(k.Want, "member")
	case *kind.UniqueItems:
		return "items " + strconv.Itoa(k.Duplicates[0]) + " and " + strconv.Itoa(k.Duplicates[1]) + " must not be equal"
	case *kind.Pattern:
		return "must match the pattern " + strconv.QuoteToASCII(k.Want)
	case *kind.Format:
		return "must be a valid " + k.Want
	case *kind.FalseSchema:
		return "not allowed"
	case *kind.AnyOf:
		return "matches none of the allowed forms"
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return "matches more than one of the allowed forms"
		}
		return "matches none of the allowed forms"
	case *kind.Not:
		return "matches a form that is not allowed"
	case *kind.DependentRequired:
		return "requires " + strings.Join(k.Missing, ", ")
	case *kind.Dependency:
		return "requires " + strings.Join(k.Missing, ", ")
	case *kind.PropertyNames:
		return "has a member name that is not allowed"
	case *kind.Contains:
		return "must contain a matching item"
	case *kind.MinContains:
		return "must contain at least " + count(k.Want, "matching item")
	case *kind.MaxContains:
		return "must contain at most " + count(k.Want, "matching item")
	}
	return "does not satisfy the schema (" + kwPath(k) + ")"
}

// count writes n things, in the singular for one.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// schemaValues renders a schema's allowed values as JSON, cut short when
// long (the line bound cuts the rest).
func schemaValues(vs []any) string {
	var b strings.Builder
	for i, v := range vs {
		if b.Len() > maxArgMessage {
			b.WriteString(", …")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		enc, err := json.Marshal(v)
		if err != nil {
			enc = []byte("?")
		}
		b.Write(enc)
	}
	return b.String()
}

func ratString(r interface{ FloatString(int) string }) string {
	s := r.FloatString(6)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Bind errors ---------------------------------------------------------------

// bindError turns a decoder failure into an ArgumentsError naming the
// argument, without a copy of the input. The decoder's own error carries
// neither the member path nor a bounded text, so the path is found by
// decoding once more with encoding/json into a fresh value of v's type —
// on the failure path only, and only to describe the error: what Bind
// decodes is still decided by the case-sensitive decoder alone.
func bindError(args []byte, v any) *ArgumentsError {
	msg := "arguments: do not match the handler's argument type"
	if t := reflect.TypeOf(v); t != nil && t.Kind() == reflect.Pointer {
		probe := reflect.New(t.Elem()).Interface()
		var ute *json.UnmarshalTypeError
		switch err := json.Unmarshal(args, probe); {
		case errors.As(err, &ute):
			loc := "arguments"
			if ute.Field != "" {
				var b strings.Builder
				b.WriteString("arguments")
				for _, seg := range strings.Split(ute.Field, ".") {
					if seg != "" {
						writeSegment(&b, seg)
					}
				}
				loc = b.String()
			}
			got, _, _ := strings.Cut(ute.Value, " ") // "number 1e400" names the input: keep the kind only
			msg = loc + ": expected " + jsonKind(ute.Type) + ", got " + got
		case err != nil:
			var se *json.SyntaxError
			if errors.As(err, &se) {
				msg = "arguments: not valid JSON"
			}
		}
	}
	return InvalidArguments(msg)
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	}
	return "value"
}
