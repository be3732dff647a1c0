package engine

import (
	"encoding/binary"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/mcpwire/mcpwire/codec"
)

// flatCodec decodes and encodes a flat struct — top-level fields of
// string, bool, integer or float64 kind and nothing else, the shape of
// most tool arguments and results — without reflection and without
// allocating beyond the strings it decodes. It reads and writes the fields
// at their offsets, so a typed call costs little more than the untyped
// call with the same schema (BenchmarkEcho in internal/refserver,
// profiles/typed-tools.benchstat.txt). Whatever it does not handle
// (escaped strings, numbers with a fraction or exponent into an integer,
// an out-of-range or non-finite value, a member of the wrong JSON type) it
// declines, and sonic does the whole value instead: both give the same
// Go value (FuzzFlatCodec).
type flatCodec struct {
	names  []string    // json names, in field order (ScanMembers' names)
	fields []flatField // per name
	// lead is structuredHead, '{' and the first field's `"name":`, when
	// that field is always written (not omitempty): encodeStructured.
	lead []byte
}

type flatField struct {
	key  []byte // `,"name":`, for the encoder (the first one's ',' becomes the '{')
	off  uintptr
	kind reflect.Kind
	omit bool // omitempty or omitzero: the zero value is left out
}

// newFlatCodec returns the codec of t, or nil when t is not flat.
func newFlatCodec(t reflect.Type) *flatCodec {
	if t.Kind() != reflect.Struct || t.Size() == 0 {
		return nil
	}
	fs := fields(t)
	if len(fs) == 0 || len(fs) > maxFlat {
		return nil
	}
	c := &flatCodec{}
	for _, f := range fs {
		if len(f.field.Index) != 1 || f.asString {
			return nil // promoted from an embedded struct, or ",string"
		}
		switch k := f.field.Type.Kind(); k {
		case reflect.String, reflect.Bool, reflect.Float64,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return nil
		}
		ft := f.field.Type
		if ft.Implements(typeMarshaler) || reflect.PointerTo(ft).Implements(typeMarshaler) ||
			ft.Implements(typeTextMarsh) || reflect.PointerTo(ft).Implements(typeTextMarsh) {
			return nil // its own JSON form
		}
		key := append(codec.AppendString([]byte{','}, f.name), ':')
		c.names = append(c.names, f.name)
		c.fields = append(c.fields, flatField{key: key, off: f.field.Offset, kind: ft.Kind(), omit: f.nilOmit})
	}
	if !c.fields[0].omit {
		c.lead = append([]byte(structuredHead+"{"), c.fields[0].key[1:]...)
	}
	return c
}

// decode fills the zeroed struct at p from args (a JSON object, or nil for
// none) and reports whether it could; when it could not, the struct may be
// partly filled and the caller decodes the whole value again.
func (c *flatCodec) decode(args []byte, p unsafe.Pointer, ch *strChunk) bool {
	if args == nil {
		return true
	}
	var arr [maxFlat][]byte
	vals := arr[:len(c.names)]
	if _, err := codec.ScanMembers(args, c.names, vals); err != nil {
		return false
	}
	return c.decodeVals(vals, p, ch, false)
}

// flatMap says where each of a flatCodec's names sits in a flatSchema's
// names, so the codec can decode what the schema's check scanned.
type flatMap struct {
	by       *flatSchema
	idx      []int // per codec name, its index in by.names; nil: a name is missing
	identity bool  // idx[i] == i for every name: the scan is in the codec's order
}

// mapFrom returns the map of c's names into f's.
func (c *flatCodec) mapFrom(f *flatSchema) *flatMap {
	m := &flatMap{by: f, idx: make([]int, len(c.names))}
	for i, name := range c.names {
		m.idx[i] = -1
		for j, fn := range f.names {
			if fn == name {
				m.idx[i] = j
			}
		}
		if m.idx[i] < 0 {
			m.idx = nil
			break
		}
	}
	if m.idx != nil {
		m.identity = true
		for i, j := range m.idx {
			m.identity = m.identity && i == j
		}
	}
	return m
}

// decodeScanned fills the zeroed struct at p from the values a flat check
// scanned (scanned holds m.by.names' values) and reports whether it could,
// as decode does. The check has seen every member once (a repeated one
// leaves the flat check undecided), so the values are those ScanMembers
// would give c's names. plain says the values are the members Peek
// recorded (codec.Envelope.PlainArguments): their strings need no check.
func (c *flatCodec) decodeScanned(m *flatMap, scanned *[maxFlat][]byte, p unsafe.Pointer, ch *strChunk, plain bool) bool {
	if m.identity {
		return c.decodeVals(scanned[:len(c.names)], p, ch, plain)
	}
	var arr [maxFlat][]byte
	vals := arr[:len(c.names)]
	for i, j := range m.idx {
		vals[i] = scanned[j]
	}
	return c.decodeVals(vals, p, ch, plain)
}

// decodeVals fills the zeroed struct at p from vals, the raw values of
// c.names (nil: absent); its strings come from ch (nil: each its own
// allocation). plain: every string value is known to be ASCII without
// escapes (codec.Envelope.PlainArguments), so its body is used as it is.
func (c *flatCodec) decodeVals(vals [][]byte, p unsafe.Pointer, ch *strChunk, plain bool) bool {
	for i, v := range vals {
		if v == nil || v[0] == 'n' { // absent or null: left zero, as sonic does
			continue
		}
		f := &c.fields[i]
		if !decodeValue(f, v, unsafe.Add(p, f.off), ch, plain) {
			return false
		}
	}
	return true
}

// decodeValue stores v, a raw value other than null, in the field f at at,
// as decodeVals does, and reports whether it could.
func decodeValue(f *flatField, v []byte, at unsafe.Pointer, ch *strChunk, plain bool) bool {
	switch f.kind {
	case reflect.String:
		if v[0] != '"' {
			return false
		}
		body := v[1 : len(v)-1]
		if !plain && !plainUTF8(body) {
			return false
		}
		*(*string)(at) = ch.string(body)
	case reflect.Bool:
		switch v[0] {
		case 't':
			*(*bool)(at) = true
		case 'f':
		default:
			return false
		}
	case reflect.Float64:
		if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
			return false
		}
		x, err := strconv.ParseFloat(unsafe.String(&v[0], len(v)), 64)
		if err != nil {
			return false
		}
		*(*float64)(at) = x
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, ok := parseInt(v, bitsOf(f.kind))
		if !ok {
			return false
		}
		switch f.kind {
		case reflect.Int:
			*(*int)(at) = int(x)
		case reflect.Int8:
			*(*int8)(at) = int8(x)
		case reflect.Int16:
			*(*int16)(at) = int16(x)
		case reflect.Int32:
			*(*int32)(at) = int32(x)
		default:
			*(*int64)(at) = x
		}
	default: // unsigned
		if v[0] == '-' {
			return false
		}
		x, ok := parseInt(v, 64)
		if !ok || x < 0 || (bitsOf(f.kind) < 64 && x >= 1<<bitsOf(f.kind)) {
			return false
		}
		switch f.kind {
		case reflect.Uint:
			*(*uint)(at) = uint(x)
		case reflect.Uint8:
			*(*uint8)(at) = uint8(x)
		case reflect.Uint16:
			*(*uint16)(at) = uint16(x)
		case reflect.Uint32:
			*(*uint32)(at) = uint32(x)
		default:
			*(*uint64)(at) = uint64(x)
		}
	}
	return true
}

// strChunk hands out the short strings a flat decode makes: their bytes
// are copied into a chunk that is only ever appended to — a full chunk is
// replaced by a new one, never written again — so every string stays
// unchanged for as long as anything holds it, and one allocation serves
// the strings of many requests instead of one allocation per string (the
// typed echo's only one). The cost: a string a handler keeps after its
// call keeps its chunk (strChunkSize bytes) from being collected, up to
// 256 times the string's own size for a 1-byte one; the chunk is small so
// that a handler keeping a few of many strings (a cache's keys) holds
// little. Each Call has one, used by one request at a time.
//
// b[lo:hi] holds only strings a typed tool's one-pass decode copied from
// members Peek recorded (typedTool.checkDecode), which are plain: printable
// ASCII without a quote or a backslash, written by codec.AppendString as
// they are. A result string that lies there (an echo of an argument) is
// copied without that scan (plain). b's bytes never change once written,
// and a new b empties the range.
type strChunk struct {
	b      []byte
	lo, hi int
}

const (
	strChunkSize = 256
	strChunkMax  = 32 // longer strings get an allocation of their own
)

// string returns body as a string (ch may be nil: a plain conversion).
// Small enough to inline: the usual short string is copied as two words
// into the chunk's room; the rest goes to stringSlow.
func (ch *strChunk) string(body []byte) string {
	l := len(body)
	if ch == nil || l < 8 || l > 16 || cap(ch.b)-len(ch.b) < l {
		return ch.stringSlow(body)
	}
	n := len(ch.b)
	ch.b = ch.b[:n+l]
	copyWords(ch.b[n:], unsafe.Pointer(unsafe.SliceData(body)), l)
	return unsafe.String(&ch.b[n], l)
}

// stringSlow is string for the other lengths, a full chunk or a nil ch.
//
//go:noinline
func (ch *strChunk) stringSlow(body []byte) string {
	if ch == nil || len(body) > strChunkMax || len(body) == 0 {
		return string(body)
	}
	if cap(ch.b)-len(ch.b) < len(body) {
		ch.renew()
	}
	n := len(ch.b)
	ch.b = append(ch.b, body...)
	return unsafe.String(&ch.b[n], len(body))
}

// renew starts a new chunk: the strings handed out so far keep the old
// one alive, and none of them is in the plain range any more.
//
//go:noinline
func (ch *strChunk) renew() {
	ch.b = make([]byte, 0, strChunkSize)
	ch.lo, ch.hi = 0, 0
}

// plain reports whether s lies in b[lo:hi] (the strings there need no
// escape). False for a nil ch.
func (ch *strChunk) plain(s string) bool {
	if ch == nil || len(s) == 0 {
		return false
	}
	// Compared as addresses, not as an offset from b's start: that
	// difference wraps around for a string below b, and one that ends
	// exactly at b's start would pass (TestStrChunkPlainBelow).
	at, base := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(ch.b)))
	return at >= base+uintptr(ch.lo) && at+uintptr(len(s)) <= base+uintptr(ch.hi)
}

// plainUTF8 reports whether the body of a JSON string is valid UTF-8
// without escapes: the string it decodes to is body itself. It reads 8
// bytes at a time while they are ASCII (most argument strings), then
// leaves the rest to utf8.Valid.
func plainUTF8(body []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	const backslashes = '\\' * ones
	i := 0
	for ; i+8 <= len(body); i += 8 {
		w := binary.LittleEndian.Uint64(body[i:])
		x := w ^ backslashes // a zero byte where body has a backslash
		if (x-ones)&^x&highs != 0 {
			return false
		}
		if w&highs != 0 {
			break // not ASCII: utf8.Valid decides, after the backslash check
		}
	}
	for j := i; j < len(body); j++ {
		if body[j] == '\\' {
			return false
		}
	}
	return utf8.Valid(body[i:])
}

// bitsOf is the size of an integer kind (int and uint: the platform's).
func bitsOf(k reflect.Kind) int {
	switch k {
	case reflect.Int8, reflect.Uint8:
		return 8
	case reflect.Int16, reflect.Uint16:
		return 16
	case reflect.Int32, reflect.Uint32:
		return 32
	case reflect.Int, reflect.Uint:
		return strconv.IntSize
	}
	return 64
}

// parseInt reads a JSON integer literal without fraction or exponent
// that fits in bits (for unsigned kinds the caller asks for 64 and checks
// the range).
func parseInt(v []byte, bits int) (int64, bool) {
	x, err := strconv.ParseInt(unsafe.String(&v[0], len(v)), 10, bits)
	return x, err == nil
}

// encode appends the JSON object of the struct at p to dst and reports
// whether it could (false for a float that JSON cannot hold: sonic
// decides what then happens).
func (c *flatCodec) encode(dst []byte, p unsafe.Pointer) ([]byte, bool) {
	return c.encodePlain(dst, p, nil)
}

// encodePlain is encode; a string field in ch's plain range (strChunk.plain)
// is copied without the escape scan.
func (c *flatCodec) encodePlain(dst []byte, p unsafe.Pointer, ch *strChunk) ([]byte, bool) {
	// Every member goes in with its ',' (one append, no test of whether it
	// is the first); the first one's becomes the '{' at the end.
	start := len(dst)
	dst, ok := c.encodeFields(dst, p, 0, ch)
	if !ok {
		return dst, false
	}
	if len(dst) == start {
		return append(dst, '{', '}'), true
	}
	dst[start] = '{'
	return append(dst, '}'), true
}

// structuredHead goes before a typed tool's structuredContent, after its
// text content (Call.structured).
const structuredHead = `}],"structuredContent":`

// encodeStructured is structuredHead, then encode without the object's
// closing brace (the caller appends it joined to what follows): when the
// first field is always written, its key is joined to structuredHead
// (c.lead), one append fewer. ch is as for encodePlain.
func (c *flatCodec) encodeStructured(dst []byte, p unsafe.Pointer, ch *strChunk) ([]byte, bool) {
	if c.lead == nil {
		dst, ok := c.encodePlain(append(dst, structuredHead...), p, ch)
		if ok {
			dst = dst[:len(dst)-1] // encodePlain's closing brace
		}
		return dst, ok
	}
	dst = append(dst, c.lead...)
	dst, ok := appendField(dst, &c.fields[0], p, ch)
	if ok {
		dst, ok = c.encodeFields(dst, p, 1, ch)
	}
	return dst, ok
}

// appendQuoted appends s, which needs no escape, between quotes: for the
// usual short string with room in dst, as two overlapping words instead
// of three appends and a memmove call.
func appendQuoted(dst []byte, s string) []byte {
	n, l := len(dst), len(s)
	if l >= 8 && l <= 16 && cap(dst)-n >= l+2 {
		dst = dst[:n+l+2]
		dst[n] = '"'
		copyWords(dst[n+1:], unsafe.Pointer(unsafe.StringData(s)), l)
		dst[n+1+l] = '"'
		return dst
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// copyShort copies src (at most 16 bytes) to dst[:len(src)] by two
// overlapping loads and stores of the widest size that fits, instead of
// a memmove call or a loop. len(dst) >= len(src).
func copyShort(dst, src []byte) {
	switch l := len(src); {
	case l >= 8:
		copyWords(dst, unsafe.Pointer(unsafe.SliceData(src)), l)
	case l >= 4:
		_ = dst[l-1]
		a, b := binary.LittleEndian.Uint32(src), binary.LittleEndian.Uint32(src[l-4:])
		binary.LittleEndian.PutUint32(dst, a)
		binary.LittleEndian.PutUint32(dst[l-4:], b)
	case l >= 2:
		_ = dst[l-1]
		a, b := binary.LittleEndian.Uint16(src), binary.LittleEndian.Uint16(src[l-2:])
		binary.LittleEndian.PutUint16(dst, a)
		binary.LittleEndian.PutUint16(dst[l-2:], b)
	case l == 1:
		dst[0] = src[0]
	}
}

// copyWords copies the l bytes at src (8 <= l <= 16) to dst[:l] as two
// overlapping 8-byte words. len(dst) >= l.
func copyWords(dst []byte, src unsafe.Pointer, l int) {
	_ = dst[l-1]
	lo := binary.LittleEndian.Uint64((*[8]byte)(src)[:])
	hi := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(src, l-8))[:])
	binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Pointer(unsafe.SliceData(dst)))[:], lo)
	binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(dst)), l-8))[:], hi)
}

// encodeFields appends the members of the fields from the index from on,
// each with its leading ','.
func (c *flatCodec) encodeFields(dst []byte, p unsafe.Pointer, from int, ch *strChunk) ([]byte, bool) {
	for i := from; i < len(c.fields); i++ {
		f := &c.fields[i]
		if f.omit && isZero(f.kind, unsafe.Add(p, f.off)) {
			continue
		}
		dst = append(dst, f.key...)
		var ok bool
		if dst, ok = appendField(dst, f, p, ch); !ok {
			return dst, false
		}
	}
	return dst, true
}

// appendField appends the value of f in the struct at p; false for a
// float JSON cannot hold, or a -0 omitempty and omitzero treat
// differently (sonic's call). A string in ch's plain range is copied as it
// is (strChunk.plain).
func appendField(dst []byte, f *flatField, p unsafe.Pointer, ch *strChunk) ([]byte, bool) {
	at := unsafe.Add(p, f.off)
	switch f.kind {
	case reflect.String:
		if s := *(*string)(at); ch.plain(s) {
			dst = appendQuoted(dst, s)
		} else {
			dst = codec.AppendString(dst, s)
		}
	case reflect.Bool:
		dst = strconv.AppendBool(dst, *(*bool)(at))
	case reflect.Float64:
		x := *(*float64)(at)
		if math.IsNaN(x) || math.IsInf(x, 0) || (f.omit && x == 0) {
			return dst, false
		}
		dst = codec.AppendFloat(dst, x)
	case reflect.Int:
		dst = strconv.AppendInt(dst, int64(*(*int)(at)), 10)
	case reflect.Int8:
		dst = strconv.AppendInt(dst, int64(*(*int8)(at)), 10)
	case reflect.Int16:
		dst = strconv.AppendInt(dst, int64(*(*int16)(at)), 10)
	case reflect.Int32:
		dst = strconv.AppendInt(dst, int64(*(*int32)(at)), 10)
	case reflect.Int64:
		dst = strconv.AppendInt(dst, *(*int64)(at), 10)
	case reflect.Uint:
		dst = strconv.AppendUint(dst, uint64(*(*uint)(at)), 10)
	case reflect.Uint8:
		dst = strconv.AppendUint(dst, uint64(*(*uint8)(at)), 10)
	case reflect.Uint16:
		dst = strconv.AppendUint(dst, uint64(*(*uint16)(at)), 10)
	case reflect.Uint32:
		dst = strconv.AppendUint(dst, uint64(*(*uint32)(at)), 10)
	case reflect.Uint64:
		dst = strconv.AppendUint(dst, *(*uint64)(at), 10)
	}
	return dst, true
}

// isZero reports whether the field of kind k at p holds its zero value.
func isZero(k reflect.Kind, p unsafe.Pointer) bool {
	switch k {
	case reflect.String:
		return *(*string)(p) == ""
	case reflect.Bool:
		return !*(*bool)(p)
	case reflect.Float64:
		return math.Float64bits(*(*float64)(p)) == 0
	case reflect.Int, reflect.Uint:
		return *(*uint)(p) == 0
	case reflect.Int8, reflect.Uint8:
		return *(*uint8)(p) == 0
	case reflect.Int16, reflect.Uint16:
		return *(*uint16)(p) == 0
	case reflect.Int32, reflect.Uint32:
		return *(*uint32)(p) == 0
	}
	return *(*uint64)(p) == 0 // int64, uint64
}
