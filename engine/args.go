package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
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
// checked), and a flat schema of typed properties and required names
// (args_flat.go). Anything else is decoded (codec.DecodeAny) and validated
// by the library: about 2-4 µs and 15 allocations for a small object
// (BenchmarkArgCheck, BenchmarkToolArgs).
//
// A failure is one -32602 whose message is a single line naming the first
// failing argument by its path and the rule it breaks, never a copy of the
// input: "Invalid params: arguments.b is required", "Invalid params:
// arguments.items[2]: want integer, got string (type)". Its length is
// bounded by maxArgMessage.

// maxArgMessage bounds the message of an argument error, in bytes.
const maxArgMessage = 200

// maxArgSegment bounds one member name quoted in an argument path.
const maxArgSegment = 40

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
	if flat != nil && len(flat.names) == 0 {
		// Exactly "a JSON object" ({"type":"object"}, optionally with an
		// empty properties, true additionalProperties, an empty required
		// and annotations): the schemas of tools without arguments, and
		// the default. Nothing to compile.
		return &argSchema{anyObject: true}, nil
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, err
	}
	return &argSchema{sch: sch, flat: flat}, nil
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

// check validates the raw arguments (nil when absent: an empty object).
func (a *argSchema) check(args []byte) *codec.Error {
	if a.anyObject {
		if args == nil || firstByte(args) == '{' {
			return nil
		}
		return argError("arguments: want object, got " + rawKind(args) + " (type)")
	}
	if a.flat != nil {
		if e, ok := a.flat.check(args); ok {
			return e
		}
	}
	return a.checkCompiled(args)
}

// checkCompiled validates args with the compiled schema.
func (a *argSchema) checkCompiled(args []byte) *codec.Error {
	var v any = map[string]any{}
	if args != nil {
		var err error
		if v, err = codec.DecodeAny(args); err != nil {
			return argError("arguments: not valid JSON")
		}
	}
	err := a.sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return argError("arguments: cannot be validated")
	}
	return argError(describe(ve, v))
}

func firstByte(b []byte) byte {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c
		}
	}
	return 0
}

func argError(msg string) *codec.Error {
	return codec.NewError(codec.CodeInvalidParams, boundMessage("Invalid params: "+msg))
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

// describe renders the first failure of ve: the deepest error on the
// first failing branch, ordered by instance location so the answer does not
// depend on map order.
func describe(ve *jsonschema.ValidationError, instance any) string {
	e := ve
	for len(e.Causes) > 0 {
		switch e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf, *kind.Not:
			// The alternatives' own errors would mislead: say which
			// combinator failed.
			return path(e.InstanceLocation, instance) + ": " + rule(e.ErrorKind)
		}
		e = firstCause(e.Causes)
	}
	if r, ok := e.ErrorKind.(*kind.Required); ok && len(r.Missing) > 0 {
		missing := append([]string(nil), r.Missing...)
		sort.Strings(missing)
		loc := append(append([]string(nil), e.InstanceLocation...), missing[0])
		s := path(loc, instance) + " is required"
		if len(missing) > 1 {
			s += " (and " + strconv.Itoa(len(missing)-1) + " more)"
		}
		return s
	}
	if a, ok := e.ErrorKind.(*kind.AdditionalProperties); ok && len(a.Properties) > 0 {
		props := append([]string(nil), a.Properties...)
		sort.Strings(props)
		loc := append(append([]string(nil), e.InstanceLocation...), props[0])
		return path(loc, instance) + " is not allowed (additionalProperties)"
	}
	return path(e.InstanceLocation, instance) + ": " + rule(e.ErrorKind)
}

// firstCause picks the cause with the smallest instance location, then
// keyword, so that equal inputs always get the same message.
func firstCause(cs []*jsonschema.ValidationError) *jsonschema.ValidationError {
	best := cs[0]
	for _, c := range cs[1:] {
		if lessLoc(c, best) {
			best = c
		}
	}
	return best
}

func lessLoc(a, b *jsonschema.ValidationError) bool {
	la, lb := a.InstanceLocation, b.InstanceLocation
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return la[i] < lb[i]
		}
	}
	if len(la) != len(lb) {
		return len(la) < len(lb)
	}
	return strings.Join(a.ErrorKind.KeywordPath(), "/") < strings.Join(b.ErrorKind.KeywordPath(), "/")
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

// rule says which keyword failed, with the schema's side of it (never the
// instance's value).
func rule(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return "want " + strings.Join(k.Want, " or ") + ", got " + k.Got + " (type)"
	case *kind.Enum:
		return "not one of the allowed values (enum)"
	case *kind.Const:
		return "not the allowed value (const)"
	case *kind.Minimum:
		return "must be >= " + ratString(k.Want) + " (minimum)"
	case *kind.Maximum:
		return "must be <= " + ratString(k.Want) + " (maximum)"
	case *kind.ExclusiveMinimum:
		return "must be > " + ratString(k.Want) + " (exclusiveMinimum)"
	case *kind.ExclusiveMaximum:
		return "must be < " + ratString(k.Want) + " (exclusiveMaximum)"
	case *kind.MultipleOf:
		return "must be a multiple of " + ratString(k.Want) + " (multipleOf)"
	case *kind.MinLength:
		return "must be at least " + strconv.Itoa(k.Want) + " characters long (minLength)"
	case *kind.MaxLength:
		return "must be at most " + strconv.Itoa(k.Want) + " characters long (maxLength)"
	case *kind.MinItems:
		return "must have at least " + strconv.Itoa(k.Want) + " items (minItems)"
	case *kind.MaxItems:
		return "must have at most " + strconv.Itoa(k.Want) + " items (maxItems)"
	case *kind.MinProperties:
		return "must have at least " + strconv.Itoa(k.Want) + " members (minProperties)"
	case *kind.MaxProperties:
		return "must have at most " + strconv.Itoa(k.Want) + " members (maxProperties)"
	case *kind.UniqueItems:
		return "items " + strconv.Itoa(k.Duplicates[0]) + " and " + strconv.Itoa(k.Duplicates[1]) + " are equal (uniqueItems)"
	case *kind.Pattern:
		return "does not match the pattern (pattern)"
	case *kind.Format:
		return "not a valid " + k.Want + " (format)"
	case *kind.FalseSchema:
		return "not allowed"
	case *kind.AnyOf:
		return "matches none of the alternatives (anyOf)"
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return "matches more than one alternative (oneOf)"
		}
		return "matches none of the alternatives (oneOf)"
	case *kind.Not:
		return "matches a forbidden schema (not)"
	case *kind.DependentRequired:
		return "requires " + strings.Join(k.Missing, ", ") + " (dependentRequired)"
	case *kind.Dependency:
		return "requires " + strings.Join(k.Missing, ", ") + " (dependencies)"
	case *kind.PropertyNames:
		return "has a member name the schema refuses (propertyNames)"
	case *kind.Contains, *kind.MinContains, *kind.MaxContains:
		return "does not contain what the schema asks (" + strings.Join(k.KeywordPath(), "/") + ")"
	}
	return "fails " + strings.Join(k.KeywordPath(), "/")
}

func ratString(r interface{ FloatString(int) string }) string {
	s := r.FloatString(6)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Bind errors ---------------------------------------------------------------

// bindError turns a decoder failure into a single-line -32602 naming the
// argument, without a copy of the input. The decoder's own error carries
// neither the member path nor a bounded text, so the path is found by
// decoding once more with encoding/json into a fresh value of v's type —
// on the failure path only, and only to describe the error: what Bind
// decodes is still decided by the case-sensitive decoder alone.
func bindError(args []byte, v any) *codec.Error {
	msg := "arguments do not match the handler's argument type"
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
			msg = loc + ": want " + jsonKind(ute.Type) + ", got " + got
		case err != nil:
			var se *json.SyntaxError
			if errors.As(err, &se) {
				msg = "arguments: not valid JSON at offset " + strconv.FormatInt(se.Offset, 10)
			}
		}
	}
	return codec.NewError(codec.CodeInvalidParams, boundMessage("Invalid arguments: "+msg))
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
