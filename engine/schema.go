package engine

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mcpwire/mcpwire/codec"
)

// Typed tools (AddTool) and prompts (AddPrompt) describe their arguments
// and results with Go types; this file turns a type into the JSON Schema
// that tools/list advertises and that the arguments are checked against.
//
// It is a small generator of our own rather than a schema library's: the
// two maintained ones we looked at (github.com/google/jsonschema-go,
// github.com/invopop/jsonschema) both make a pointer field without
// omitempty required, the first has no tags for enums and ranges, the
// second puts named types behind $ref/$defs and brings four modules with
// it; and the schema's exact shape matters here, because a flat object of
// typed properties is checked on the raw bytes without decoding them
// (args_flat.go). Validation stays with santhosh-tekuri/jsonschema, which
// compiles what this file writes.
//
// The rules, for a struct's exported fields as encoding/json sees them:
//
//   - The json tag names the property ("-" leaves the field out); an
//     embedded struct without a name has its fields promoted.
//   - A field is required unless it is a pointer or its json tag says
//     omitempty or omitzero.
//   - A struct is an object that allows no other members
//     (additionalProperties false); a map with string (or integer) keys an
//     object of its values; a slice or an array an array of its elements
//     (an array's length is its minItems and maxItems); []byte a base64
//     string; time.Time a date-time string; json.RawMessage, interfaces
//     and types with their own MarshalJSON any value; other
//     encoding.TextMarshaler types a string.
//   - bool is boolean, integer kinds are integer (sized and unsigned ones
//     with their range), floats are number, strings are string; a
//     `json:",string"` field is a string.
//   - A pointer field may also be null. In an output schema, so may a
//     slice, map or interface field without omitempty or omitzero: Go
//     encodes their nil as null.
//   - Recursive types, channels, functions and complex numbers are refused
//     at registration.
//
// Tags add what a type cannot say. Each holds one keyword's value:
//
//	jsonschema:"the text to return"      description (as go-sdk reads it)
//	enum:"fast,exact"                   allowed values, comma-separated
//	minimum:"0" maximum:"100"           numeric bounds
//	minLength:"1" maxLength:"64"        string length, in characters
//	pattern:"^[a-z]+$"                  a regular expression (RE2)
//	minItems:"1" maxItems:"10"          array length
//
// On a slice or array field, enum, minimum, maximum, minLength, maxLength
// and pattern apply to its elements; minItems and maxItems to the field.

// schemaMode says which side of a tool a schema describes.
type schemaMode uint8

const (
	schemaInput  schemaMode = iota // the arguments: what a client sends
	schemaOutput                   // structuredContent: what Go encodes
)

var (
	typeTime       = reflect.TypeFor[time.Time]()
	typeRaw        = reflect.TypeFor[json.RawMessage]()
	typeMarshaler  = reflect.TypeFor[json.Marshaler]()
	typeTextMarsh  = reflect.TypeFor[encoding.TextMarshaler]()
	errNotAnObject = errors.New("is not a struct or a map with string keys: a tool's arguments and structured result are JSON objects")
)

// schemaFor returns the JSON Schema of t, which must encode as a JSON
// object (a struct or a string-keyed map, possibly behind pointers).
func schemaFor(t reflect.Type, mode schemaMode) ([]byte, error) {
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if base.Kind() != reflect.Struct && base.Kind() != reflect.Map || base == typeTime {
		return nil, fmt.Errorf("%s %w", t, errNotAnObject)
	}
	g := schemaGen{mode: mode, seen: map[reflect.Type]bool{}}
	if err := g.value(base, nil, false); err != nil {
		return nil, fmt.Errorf("%s: %w", t, err)
	}
	return g.b, nil
}

// schemaGen writes one schema, in the order the fields are declared (a
// stable, readable tools/list).
type schemaGen struct {
	mode schemaMode
	seen map[reflect.Type]bool // the struct types being written: a cycle
	b    []byte
}

// fieldTags are a field's schema tags.
type fieldTags struct {
	description                   string
	enum                          string
	minimum, maximum              string
	minLength, maxLength, pattern string
	minItems, maxItems            string
	asString                      bool // json ",string"
}

func readTags(f reflect.StructField, asString bool) *fieldTags {
	return &fieldTags{
		description: f.Tag.Get("jsonschema"),
		enum:        f.Tag.Get("enum"),
		minimum:     f.Tag.Get("minimum"),
		maximum:     f.Tag.Get("maximum"),
		minLength:   f.Tag.Get("minLength"),
		maxLength:   f.Tag.Get("maxLength"),
		pattern:     f.Tag.Get("pattern"),
		minItems:    f.Tag.Get("minItems"),
		maxItems:    f.Tag.Get("maxItems"),
		asString:    asString,
	}
}

// value writes the schema of a value of type t; tags are the field's (nil
// at the top and for elements); nullable adds null to its type.
func (g *schemaGen) value(t reflect.Type, tags *fieldTags, nullable bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	g.b = append(g.b, '{')
	n := len(g.b)
	typ := ""
	switch {
	case tags != nil && tags.asString && isScalar(t):
		typ = "string"
	case t == typeTime:
		typ = "string"
		g.key(n, "format")
		g.b = append(g.b, `"date-time"`...)
	case t == typeRaw, t.Kind() == reflect.Interface:
		// Any JSON value: no type, nothing to add null to.
		nullable = false
	case t.Implements(typeMarshaler) || reflect.PointerTo(t).Implements(typeMarshaler):
		nullable = false
	case t.Implements(typeTextMarsh) || reflect.PointerTo(t).Implements(typeTextMarsh):
		typ = "string"
	default:
		var err error
		if typ, err = g.kind(t, n, tags); err != nil {
			return err
		}
	}
	if typ != "" {
		// "type" first: written into its place ahead of what kind wrote.
		head := []byte(`"type":`)
		if nullable {
			head = append(head, `["`...)
			head = append(head, typ...)
			head = append(head, `","null"]`...)
		} else {
			head = codec.AppendString(head, typ)
		}
		if len(g.b) > n {
			head = append(head, ',')
		}
		g.b = append(g.b[:n], append(head, g.b[n:]...)...)
	}
	if tags != nil {
		if err := g.constraints(t, n, tags); err != nil {
			return err
		}
	}
	g.b = append(g.b, '}')
	return nil
}

// key writes the separator (when the object opened at n has members) and
// the member name k.
func (g *schemaGen) key(n int, k string) {
	if len(g.b) > n {
		g.b = append(g.b, ',')
	}
	g.b = codec.AppendString(g.b, k)
	g.b = append(g.b, ':')
}

func isScalar(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	}
	return false
}

// kind writes the members of t's schema after "type" and returns the type.
func (g *schemaGen) kind(t reflect.Type, n int, tags *fieldTags) (string, error) {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean", nil
	case reflect.Int, reflect.Int64:
		return "integer", nil
	case reflect.Int8, reflect.Int16, reflect.Int32:
		bits := t.Bits()
		g.bounds(n, tags, strconv.FormatInt(-1<<(bits-1), 10), strconv.FormatInt(1<<(bits-1)-1, 10))
		return "integer", nil
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		g.bounds(n, tags, "0", "")
		return "integer", nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		g.bounds(n, tags, "0", strconv.FormatUint(1<<t.Bits()-1, 10))
		return "integer", nil
	case reflect.Float32, reflect.Float64:
		return "number", nil
	case reflect.String:
		return "string", nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			g.key(n, "contentEncoding")
			g.b = append(g.b, `"base64"`...)
			return "string", nil
		}
		g.key(n, "items")
		var elemTags *fieldTags
		if tags != nil {
			// The value keywords of a list field are its elements'.
			e := *tags
			e.description, e.minItems, e.maxItems, e.asString = "", "", "", false
			elemTags = &e
		}
		if err := g.value(t.Elem(), elemTags, g.nilable(t.Elem())); err != nil {
			return "", err
		}
		if t.Kind() == reflect.Array {
			g.key(n, "minItems")
			g.b = strconv.AppendInt(g.b, int64(t.Len()), 10)
			g.key(n, "maxItems")
			g.b = strconv.AppendInt(g.b, int64(t.Len()), 10)
		}
		return "array", nil
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return "", fmt.Errorf("map key type %s is not a string", t.Key())
		}
		g.key(n, "additionalProperties")
		if err := g.value(t.Elem(), nil, g.nilable(t.Elem())); err != nil {
			return "", err
		}
		return "object", nil
	case reflect.Struct:
		return "object", g.object(t, n)
	}
	return "", fmt.Errorf("type %s has no JSON form", t)
}

// nilable reports whether an element of type t may be null in this mode:
// a pointer always; a slice, map or interface in output mode.
func (g *schemaGen) nilable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer:
		return true
	case reflect.Slice, reflect.Map:
		return g.mode == schemaOutput && t != typeRaw
	}
	return false
}

// bounds writes the range an integer kind can hold, unless the field's
// tags set their own.
func (g *schemaGen) bounds(n int, tags *fieldTags, lo, hi string) {
	if lo != "" && (tags == nil || tags.minimum == "") {
		g.key(n, "minimum")
		g.b = append(g.b, lo...)
	}
	if hi != "" && (tags == nil || tags.maximum == "") {
		g.key(n, "maximum")
		g.b = append(g.b, hi...)
	}
}

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	name     string
	field    reflect.StructField
	optional bool // pointer, omitempty or omitzero
	nilOmit  bool // omitempty or omitzero: nil is left out, never null
	asString bool
}

// fields lists t's fields as encoding/json encodes them: exported ones,
// named by their tag, embedded structs without a name promoted (the
// first field of a name wins).
func fields(t reflect.Type) []jsonField {
	var out []jsonField
	seen := map[string]bool{}
	var walk func(t reflect.Type, index []int, depth int)
	walk = func(t reflect.Type, index []int, depth int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && name == "" && ft.Kind() == reflect.Struct && depth < 8 {
				walk(ft, append(append([]int(nil), index...), i), depth+1)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			f.Index = append(append([]int(nil), index...), i)
			jf := jsonField{name: name, field: f}
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "omitempty", "omitzero":
					jf.optional, jf.nilOmit = true, true
				case "string":
					jf.asString = true
				}
			}
			if f.Type.Kind() == reflect.Pointer {
				jf.optional = true
			}
			out = append(out, jf)
		}
	}
	walk(t, nil, 0)
	return out
}

// object writes a struct's properties, required list and closure.
func (g *schemaGen) object(t reflect.Type, n int) error {
	if g.seen[t] {
		return fmt.Errorf("type %s refers to itself", t)
	}
	g.seen[t] = true
	defer delete(g.seen, t)
	fs := fields(t)
	g.key(n, "properties")
	g.b = append(g.b, '{')
	for i, f := range fs {
		if i > 0 {
			g.b = append(g.b, ',')
		}
		g.b = codec.AppendString(g.b, f.name)
		g.b = append(g.b, ':')
		nullable := f.field.Type.Kind() == reflect.Pointer ||
			(g.mode == schemaOutput && !f.nilOmit && g.nilable(f.field.Type))
		if err := g.value(f.field.Type, readTags(f.field, f.asString), nullable); err != nil {
			return fmt.Errorf("field %s: %w", f.field.Name, err)
		}
	}
	g.b = append(g.b, '}')
	req := false
	for _, f := range fs {
		if f.optional {
			continue
		}
		if !req {
			g.key(n, "required")
			g.b = append(g.b, '[')
			req = true
		} else {
			g.b = append(g.b, ',')
		}
		g.b = codec.AppendString(g.b, f.name)
	}
	if req {
		g.b = append(g.b, ']')
	}
	g.key(n, "additionalProperties")
	g.b = append(g.b, "false"...)
	return nil
}

// constraints writes the keywords of a field's tags that apply to a value
// of type t (its elements' for a list: see kind).
func (g *schemaGen) constraints(t reflect.Type, n int, tags *fieldTags) error {
	if tags.description != "" {
		g.key(n, "description")
		g.b = codec.AppendString(g.b, tags.description)
	}
	list := t.Kind() == reflect.Slice || t.Kind() == reflect.Array
	if list && t.Elem().Kind() != reflect.Uint8 {
		// The value keywords went to the elements.
		return g.counts(n, tags.minItems, tags.maxItems, "minItems", "maxItems")
	}
	if tags.minItems != "" || tags.maxItems != "" {
		return errors.New("minItems and maxItems apply to slices and arrays")
	}
	if tags.enum != "" {
		g.key(n, "enum")
		g.b = append(g.b, '[')
		for i, v := range strings.Split(tags.enum, ",") {
			if i > 0 {
				g.b = append(g.b, ',')
			}
			enc, err := enumValue(t, strings.TrimSpace(v), tags.asString)
			if err != nil {
				return err
			}
			g.b = append(g.b, enc...)
		}
		g.b = append(g.b, ']')
	}
	for _, b := range []struct{ key, val string }{{"minimum", tags.minimum}, {"maximum", tags.maximum}} {
		if b.val == "" {
			continue
		}
		f, err := strconv.ParseFloat(b.val, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%s %q is not a number", b.key, b.val)
		}
		g.key(n, b.key)
		g.b = strconv.AppendFloat(g.b, f, 'f', -1, 64)
	}
	if err := g.counts(n, tags.minLength, tags.maxLength, "minLength", "maxLength"); err != nil {
		return err
	}
	if tags.pattern != "" {
		if _, err := regexp.Compile(tags.pattern); err != nil {
			return fmt.Errorf("pattern %q: %w", tags.pattern, err)
		}
		g.key(n, "pattern")
		g.b = codec.AppendString(g.b, tags.pattern)
	}
	return nil
}

// counts writes two non-negative integer keywords.
func (g *schemaGen) counts(n int, lo, hi, loKey, hiKey string) error {
	for _, c := range []struct{ key, val string }{{loKey, lo}, {hiKey, hi}} {
		if c.val == "" {
			continue
		}
		v, err := strconv.ParseUint(c.val, 10, 31)
		if err != nil {
			return fmt.Errorf("%s %q is not a count", c.key, c.val)
		}
		g.key(n, c.key)
		g.b = strconv.AppendUint(g.b, v, 10)
	}
	return nil
}

// enumValue encodes one allowed value of an enum tag for a value of type t.
func enumValue(t reflect.Type, v string, asString bool) ([]byte, error) {
	if asString {
		return codec.AppendString(nil, v), nil
	}
	bad := fmt.Errorf("enum value %q is not a %s", v, t)
	switch t.Kind() {
	case reflect.String:
		return codec.AppendString(nil, v), nil
	case reflect.Bool:
		if v != "true" && v != "false" {
			return nil, bad
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if _, err := strconv.ParseInt(v, 10, t.Bits()); err != nil {
			return nil, bad
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if _, err := strconv.ParseUint(v, 10, t.Bits()); err != nil {
			return nil, bad
		}
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, bad
		}
		return strconv.AppendFloat(nil, f, 'f', -1, 64), nil
	default:
		return nil, fmt.Errorf("enum applies to strings, numbers and booleans, not %s", t)
	}
	return []byte(v), nil
}
