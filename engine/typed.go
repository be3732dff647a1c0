package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpwire/mcpwire/codec"
	"github.com/mcpwire/mcpwire/mcp"
)

// ResultText is implemented by a typed tool's result type whose text
// content should read otherwise than its JSON. A typed tool's result is
// structuredContent plus one text content for the clients that ignore
// structuredContent; that text is the result's JSON unless its type says
// better: AppendResultText appends the text to dst and returns the
// extended slice (no allocation needed when dst has room).
type ResultText interface {
	AppendResultText(dst []byte) []byte
}

// AddTool registers a typed tool: h receives the arguments decoded into In
// and returns Out, which becomes the result's structuredContent plus a
// text content carrying the same JSON (or what Out's ResultText says).
//
// t is registered as Server.AddTool registers it, with t.Handler set to a
// wrapper of h. When t.InputSchema is empty it is inferred from In, and
// when t.OutputSchema is empty from Out (see the rules in schema.go:
// json tags name the properties, non-pointer fields without omitempty are
// required, structs refuse unknown members; the jsonschema, enum, minimum,
// maximum, minLength, maxLength, pattern, minItems and maxItems tags add
// what a type cannot say). In and Out must encode as JSON objects (structs
// or maps); an Out that is an interface type gets no outputSchema.
//
// Everything is done once, here: the schemas are built and compiled, and
// the JSON encoder and decoder for In and Out are prepared. Per call the
// arguments are checked against the inputSchema (tools/call's rules: a
// failure is the tool's error result, and h never runs), decoded into In
// with the same exact-case rules as Call.Bind (a failure the schema did
// not catch is the same kind of error; with a flat schema that names each
// field of In, and arguments the transport's parser recorded, the check
// and the decode are one pass), and Out is encoded once for both
// places. In's short strings (up to 32 bytes) are copied into a 256-byte
// chunk that serves several calls, so a typed call need not allocate: a
// string h keeps after it returns keeps that chunk in memory (a handler
// that stores many short argument strings, such as a cache's keys, should
// store strings.Clone of them). With Tool.ValidateOutput or Config.ValidateOutput, the encoded
// Out is checked against the outputSchema; a result that fails is never
// sent: the call is answered -32603, logged, and counted in
// Stats.InvalidOutputs.
//
// h returns an error as a ToolHandler does: a *codec.Error is a JSON-RPC
// error, any other error a tool result with isError true and the error's
// text. A handler that has set the result itself (Call.InputRequired,
// Call.Text…) returns the zero Out and nil: its result stands.
func AddTool[In, Out any](s *Server, t Tool, h func(c *Call, in In) (Out, error)) error {
	if h == nil {
		return fmt.Errorf("engine: tool %q: %w", t.Name, errNoHandler)
	}
	inType, outType := reflect.TypeFor[In](), reflect.TypeFor[Out]()
	if len(t.InputSchema) == 0 {
		sch, err := schemaFor(inType, schemaInput)
		if err != nil {
			return fmt.Errorf("engine: tool %q: input %w", t.Name, err)
		}
		t.InputSchema = sch
	}
	if len(t.OutputSchema) == 0 && outType.Kind() != reflect.Interface {
		sch, err := schemaFor(outType, schemaOutput)
		if err != nil {
			return fmt.Errorf("engine: tool %q: output %w", t.Name, err)
		}
		t.OutputSchema = sch
	}
	var outSchema *jsonschema.Schema
	if len(t.OutputSchema) != 0 && (t.ValidateOutput || s.opt.ValidateOutput) {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(t.OutputSchema)))
		if err != nil {
			return fmt.Errorf("engine: tool %q: outputSchema: %s", t.Name, firstLine(err.Error()))
		}
		if outSchema, err = compileSchemaDoc(doc); err != nil {
			return fmt.Errorf("engine: tool %q: outputSchema: %s", t.Name, firstLine(err.Error()))
		}
	}
	// Compiling sonic's code for the two types now keeps that cost off the
	// first call; a type sonic cannot compile ahead is compiled then.
	_ = codec.Pretouch(inType)
	_ = codec.Pretouch(outType)
	tt := &typedTool{
		name:   t.Name,
		in:     newFlatCodec(inType),
		out:    newFlatCodec(outType),
		schema: outSchema,
	}
	tt.direct = tt.out != nil && tt.schema == nil
	text := resultTextFunc[Out]()
	if f := tt.out; tt.direct && text != nil && len(f.fields) == 1 && f.fields[0].kind == reflect.String && f.lead != nil {
		tt.oneMid = append(append([]byte{'"'}, f.lead...), '"')
		tt.oneOff = f.fields[0].off
		tt.oneTail = append([]byte{'"'}, s.structTail...)
		if len(tt.oneMid) <= len(tt.oneMidArr) && len(tt.oneTail) >= len(tt.oneMidArr) {
			copy(tt.oneMidArr[:], tt.oneMid)
			tt.midArr = true
		}
		if k := len(tt.oneTail); k >= 64 && k <= 3*64 {
			tt.oneTailLo, tt.oneTailHi = [64]byte(tt.oneTail), [64]byte(tt.oneTail[k-64:])
			if k > 2*64 {
				tt.oneTailMid = [64]byte(tt.oneTail[64:])
			}
			tt.tailArr = true
		}
		tt.echo = tt.midArr && tt.tailArr
		tt.echoFixed = len(responseHead) + len(textHead) + 1 + len(tt.oneMid) + len(tt.oneTail)
	}
	// The closure keeps in and out on its stack: the flat codec reads and
	// writes them in place, and the sonic fallbacks work on copies, so
	// neither escapes (TestTypedEchoAllocs).
	//
	// call is the handler with n, the recorded members' count
	// (PlainArguments) when callTool left the check to it, else -1.
	// callTool calls it directly (typedTool.call), having found both.
	call := func(c *Call, n int) error {
		var in In
		if n >= 0 {
			// callTool left the check to this handler (argSchema.typed).
			if tt.checkDecode(&c.env, n, unsafe.Pointer(&in), &c.strs) {
				goto decoded
			}
			in = *new(In) // what checkDecode may have filled
			if !c.checkArgs(c.tool.args) {
				return nil
			}
		}
		if args := c.env.Arguments; tt.in == nil || !tt.decodeIn(c, unsafe.Pointer(&in)) {
			if args == nil {
				args = emptyObject
			}
			p := new(In)
			if err := codec.Unmarshal(args, p); err != nil {
				return bindError(args, p)
			}
			in = *p
		}
	decoded:
		out, err := h(c, in)
		if err != nil || c.result {
			return err
		}
		var txt []byte
		if text != nil {
			// Into a buffer of the Call's own, kept for the next call (Out
			// may still hold bytes of the ArgBytes buffer).
			txt = text(out, c.textBuf[:0])
			if cap(txt) != cap(c.textBuf) {
				c.textBuf = txt // grown: kept (the same room needs no store)
			}
			if tt.echo && c.echoOne(tt, txt, unsafe.Pointer(&out)) {
				return nil // (its own return: no values reloaded for the test below)
			}
			if tt.direct && c.structuredFlat(tt, txt, unsafe.Pointer(&out)) {
				return nil
			}
		}
		var enc []byte
		ok := false
		if tt.out != nil {
			enc, ok = tt.out.encode(c.scratch[:0], unsafe.Pointer(&out))
		}
		if !ok {
			if enc, err = codec.AppendMarshal(c.scratch[:0], out); err != nil {
				c.srv.log.l.Error("tool result not encoded", "tool", tt.name, "err", err)
				return errOutputEncode
			}
		}
		c.scratch = enc
		if text == nil {
			txt = enc
		}
		if err := c.structured(tt, enc, txt); err != nil || !ok {
			return err
		}
		c.esc = len(c.out) // the flat codec's encoding: escaped, as the rest
		return nil
	}
	tt.call = call
	t.Handler = func(c *Call) error {
		n := -1
		if a := c.tool.args; a != nil && a.typed == tt {
			n = c.env.PlainArguments()
		}
		return call(c, n)
	}
	return s.addTool(t, tt)
}

// typedTool is what a typed tool's handler keeps besides h.
type typedTool struct {
	name string
	// call is the tool's handler given the recorded members' count
	// (AddTool): callTool, which has read it, calls it directly.
	call    func(c *Call, n int) error
	in, out *flatCodec         // nil when the type is not flat
	schema  *jsonschema.Schema // the compiled outputSchema, with ValidateOutput
	// direct: Out is flat and no output schema checks it, so with a
	// ResultText its encoding goes straight into the response
	// (structuredFlat), not through a scratch buffer and a copy.
	direct bool
	inMap  atomic.Pointer[flatMap]
	// With a flat input schema that names every field of In (fuse):
	// flat is that schema and slots its names, in its order, as
	// checkDecode reads them.
	flat  *flatSchema
	slots []fusedSlot
	// oneMid and oneTail, when Out is a single string field always
	// written (direct, with a ResultText): the response from the text's
	// closing quote to that string's body (`"}],"structuredContent":{"name":"`)
	// and after it (`"`, Server.structTail). structuredFlat and echoOne write a string
	// that needs no escape between them with one capacity check.
	oneMid, oneTail []byte
	oneOff          uintptr // with oneMid: that string's offset in Out
	// oneMidArr is oneMid and zeros, when it fits (midArr): echoOne and
	// structuredFlat copy it as one array (moves the compiler writes out, no memmove
	// call); what lies past oneMid is the string's and the tail's, written
	// after it (oneTail is at least as long).
	oneMidArr [48]byte
	midArr    bool
	// oneTailLo and oneTailHi are the first and the last 64 bytes of
	// oneTail, when it has 64 to 192 (tailArr): echoOne and structuredFlat write
	// them as two arrays, the second overlapping the first, and past 128
	// bytes oneTailMid, the 64 after the first, between them (a longer
	// serverInfo: wrk's reference server, with a title, has 150 bytes).
	oneTailLo, oneTailMid, oneTailHi [64]byte
	tailArr                          bool
	echo                             bool // oneMid, midArr and tailArr: echoOne may write
	// echoFixed, with echo: the length of echoOne's response less the id
	// and the string's two copies (its constant parts, added once here).
	echoFixed int
}

// fusedSlot is a name of a typed tool's flat input schema with what
// checkDecode needs of it in one place.
type fusedSlot struct {
	name    string
	accepts uint8      // the plain classes its type accepts (flatSchema.accepts)
	field   *flatField // its field in In; nil: none
	// lo, hi: wordEnds of a name of at most 16 bytes, for is.
	lo, hi uint64
}

// newFusedSlot returns the slot of name, its ends computed.
func newFusedSlot(name string, accepts uint8) fusedSlot {
	s := fusedSlot{name: name, accepts: accepts}
	if len(name) <= 16 {
		s.lo, s.hi, _ = wordEnds([]byte(name))
	}
	return s
}

// wordEnds returns the first and the last bytes of b (at most 16) by
// two overlapping loads of the widest size k that fits (8, 4, 2 or 1
// bytes; 0 for an empty b), never past b's end: lo holds b[:k], hi
// b[len(b)-k:]. Two names of the same length are equal exactly when their
// ends are; stored as 8-byte words at an offset o and o+len(b)-k, the
// ends write b and zeros up to o+len(b)-k+8.
func wordEnds(b []byte) (lo, hi uint64, k int) {
	switch l := len(b); {
	case l >= 8:
		return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[l-8:]), 8
	case l >= 4:
		return uint64(binary.LittleEndian.Uint32(b)), uint64(binary.LittleEndian.Uint32(b[l-4:])), 4
	case l >= 2:
		return uint64(binary.LittleEndian.Uint16(b)), uint64(binary.LittleEndian.Uint16(b[l-2:])), 2
	case l == 1:
		return uint64(b[0]), uint64(b[0]), 1
	}
	return 0, 0, 0
}

// is reports whether name, a member name Peek recorded, is s.name. A
// name of up to 16 bytes is compared by its ends (wordEnds), inline where
// a string compare is a call (memequal) around which the caller's
// registers are saved.
func (s *fusedSlot) is(name []byte) bool {
	if len(name) != len(s.name) {
		return false
	}
	if len(name) <= 16 {
		lo, hi, _ := wordEnds(name)
		return lo == s.lo && hi == s.hi
	}
	return s.name == string(name)
}

// fuse reports whether tt can check arguments against f and decode them
// in the same pass (checkDecode), and prepares it: In is flat and f names
// each of its fields, so no member checkDecode passes over is one In
// wants.
func (tt *typedTool) fuse(f *flatSchema) bool {
	if f == nil || tt.in == nil {
		return false
	}
	slots := make([]fusedSlot, len(f.names))
	for x, name := range f.names {
		slots[x] = newFusedSlot(name, f.accepts[x])
	}
	for i, name := range tt.in.names {
		x := -1
		for j, fn := range f.names {
			if fn == name {
				x = j
			}
		}
		if x < 0 {
			return false
		}
		slots[x].field = &tt.in.fields[i]
	}
	tt.flat, tt.slots = f, slots
	return true
}

// checkDecode is flatSchema.checkPlain and the flat decode of In in one
// pass over the members Peek recorded of env's arguments
// (PlainArguments() >= 0), without the values' slice between them: each
// member is found in the schema, its value's class checked, and the value
// stored in its field of the zeroed In at p. It reports true when the
// arguments pass and In is complete; false leaves In partly filled and
// the verdict to checkArgs (a member that fails, a repeated or unknown
// one the plain check leaves undecided, a value the flat decode declines).
func (tt *typedTool) checkDecode(env *codec.Envelope, n int, p unsafe.Pointer, ch *strChunk) bool {
	// The usual arguments first, by a loop that calls nothing (so that
	// the compiler keeps its values in registers): names of up to 16
	// bytes, strings of up to 16 bytes with room in the chunk, null,
	// booleans, and numbers of up to 18 digits into an int or int64.
	// Anything else is left to checkDecodeAll, which starts again (it
	// stores the same values in the same fields).
	var seen uint32
	ch.lo = len(ch.b) // the plain strings of this call (strChunk)
	for j := range n {
		name, v := env.PlainArgument(j)
		if len(name) > 16 {
			goto all
		}
		var sl *fusedSlot
		// Its ends once, compared with each slot's (fusedSlot.is): the
		// j-th first (arguments in the schema's order), then all.
		lo, hi, _ := wordEnds(name)
		x := j
		if s := tt.slots; x < len(s) && len(s[x].name) == len(name) && lo == s[x].lo && hi == s[x].hi {
			sl = &s[x]
		} else {
			for i := range s {
				if len(s[i].name) == len(name) && lo == s[i].lo && hi == s[i].hi {
					sl, x = &s[i], i
					break
				}
			}
		}
		if sl == nil {
			if tt.flat.closed { // (tt.flat read where used: not kept in a register or a spill slot)
				return false
			}
			continue
		}
		if bit := uint32(1) << (uint(x) & 31); seen&bit != 0 || sl.accepts&plainClass[v[0]] == 0 {
			return false
		} else {
			seen |= bit
		}
		if fd := sl.field; fd != nil && v[0] != 'n' { // null: left zero
			at := unsafe.Add(p, fd.off)
			switch {
			case fd.kind == reflect.String && v[0] == '"':
				// The value's length decides first (its quotes and 1 to 16
				// bytes), so that the body's slicing needs no bounds check.
				if len(v) <= 2 || len(v) > 18 {
					if len(v) == 2 {
						break // "": left zero
					}
					goto all
				}
				body, k := v[1:len(v)-1], len(ch.b)
				// Its two ends as words (wordEnds) into the chunk's
				// room: what the second writes past the string, up to
				// k+len(body)-w+8, is room no string has yet.
				lo, hi, w := wordEnds(body)
				if cap(ch.b)-k < len(body)-w+8 {
					// A new chunk, as stringSlow takes one (strChunkSize
					// bytes hold any string of up to 16 and its word);
					// the strings this call stored before stay in the
					// old one, outside the plain range.
					ch.renew()
					k = 0
				}
				ch.b = ch.b[:k+len(body)]
				to := unsafe.Add(unsafe.Pointer(unsafe.SliceData(ch.b)), k)
				putWord(to, 0, lo)
				putWord(to, len(body)-w, hi)
				*(*string)(at) = unsafe.String((*byte)(to), len(body))
			case fd.kind == reflect.Bool && v[0] == 't':
				*(*bool)(at) = true
			case fd.kind == reflect.Bool && v[0] == 'f':
			case (fd.kind == reflect.Int || fd.kind == reflect.Int64) && v[0]-'0' <= 9 && len(v) <= 18:
				// A recorded number is a non-negative integer without
				// fraction or exponent (a property of any type can bring
				// another value: not a digit first, it is left to
				// checkDecodeAll); 18 digits cannot overflow an int64.
				var x uint64
				for _, d := range v {
					x = x*10 + uint64(d-'0')
				}
				if fd.kind == reflect.Int64 {
					*(*int64)(at) = int64(x)
				} else if x <= math.MaxInt {
					*(*int)(at) = int(x)
				} else {
					return false // as decodeValue: out of range
				}
			default:
				goto all
			}
		}
	}
	ch.hi = len(ch.b)
	return seen&tt.flat.reqBits == tt.flat.reqBits
all:
	return tt.checkDecodeAll(env, n, p, ch)
}

// checkDecodeAll is checkDecode for any recorded arguments.
func (tt *typedTool) checkDecodeAll(env *codec.Envelope, n int, p unsafe.Pointer, ch *strChunk) bool {
	f := tt.flat
	var seen uint32
	ch.lo = len(ch.b) // the plain strings of this call (strChunk)
	for j := range n {
		name, v := env.PlainArgument(j)
		var sl *fusedSlot
		x := 0
		for i := range tt.slots {
			if s := &tt.slots[i]; s.is(name) {
				sl, x = s, i
				break
			}
		}
		if sl == nil {
			if f.closed {
				return false
			}
			continue
		}
		if seen&(1<<x) != 0 || sl.accepts&plainClass[v[0]] == 0 {
			return false
		}
		seen |= 1 << x
		if fd := sl.field; fd != nil && v[0] != 'n' { // null: left zero
			if fd.kind == reflect.String && v[0] == '"' {
				*(*string)(unsafe.Add(p, fd.off)) = ch.string(v[1 : len(v)-1])
			} else if !decodeValue(fd, v, unsafe.Add(p, fd.off), ch, true) {
				return false
			}
		}
	}
	ch.hi = len(ch.b)
	return seen&f.reqBits == f.reqBits
}

// decodeIn decodes c's arguments into the zeroed In at p with the flat
// codec: from what the tool's flat check scanned when it did (one pass
// over the arguments instead of two), else by scanning them.
func (tt *typedTool) decodeIn(c *Call, p unsafe.Pointer) bool {
	if by := c.flatBy; by != nil {
		m := tt.inMap.Load()
		if m == nil || m.by != by {
			m = tt.in.mapFrom(by)
			tt.inMap.Store(m)
		}
		if m.idx != nil {
			return tt.in.decodeScanned(m, &c.flatVals, p, &c.strs, c.env.PlainArguments() >= 0)
		}
	}
	return tt.in.decode(c.env.Arguments, p, &c.strs)
}

// resultTextFunc returns Out's AppendResultText as a plain function, or
// nil when Out has none. Called through it, the method gets Out by value
// as its receiver: no interface, so no copy of Out on the heap per call.
func resultTextFunc[Out any]() func(Out, []byte) []byte {
	t := reflect.TypeFor[Out]()
	if t.Kind() == reflect.Interface || !t.Implements(reflect.TypeFor[ResultText]()) {
		return nil
	}
	m, ok := t.MethodByName("AppendResultText")
	if !ok {
		return nil
	}
	f, _ := m.Func.Interface().(func(Out, []byte) []byte)
	return f
}

var emptyObject = []byte("{}")

var (
	errBadOutput    = codec.NewError(codec.CodeInternalError, "Internal error: the tool's result does not match its output schema")
	errOutputEncode = codec.NewError(codec.CodeInternalError, "Internal error: the tool's result cannot be encoded")
	errOutputNotObj = codec.NewError(codec.CodeInternalError, "Internal error: the tool's result is not a JSON object")
	errPromptArgs   = errors.New("engine: prompt arguments type must be a struct of string fields")
)

// structured sets the result of a typed tool from its encoded Out: enc
// as structuredContent and text, escaped, as the text content. With an
// output schema, enc must pass it.
func (c *Call) structured(tt *typedTool, enc, text []byte) error {
	if len(enc) < 2 || enc[0] != '{' {
		c.srv.log.l.Error("tool result is not a JSON object", "tool", tt.name)
		return errOutputNotObj
	}
	if tt.schema != nil {
		v, err := codec.DecodeAny(enc)
		if err == nil {
			if ae := validateValue(tt.schema, v); ae != nil {
				c.srv.stats.InvalidOutputs.Add(1)
				// The problems name paths in the result, not arguments.
				c.srv.log.l.Error("tool result refused by its output schema", "tool", tt.name,
					"problems", strings.ReplaceAll(strings.Join(ae.lines, "; "), "arguments", "result"))
				return errBadOutput
			}
		}
	}
	// The result's opening joined to the head (openText), the tail in one
	// append: each append is a memmove call, which for these few bytes
	// costs more than the copy.
	out := codec.AppendStringBytes(c.openText(), text)
	out = append(out, structuredHead...)
	out = append(out, enc...)
	c.out = append(out, c.srv.textTail[2:]...)
	c.result, c.open = true, true
	c.rkind = kindComplete
	c.esc = 0
	return nil
}

// structuredFlat is structured for a tool whose Out the flat codec
// encodes (tt.direct) and whose text is already known: Out at p is encoded
// in place in the response. It reports false, with no result set, when
// the flat codec declines Out (a float JSON cannot hold): the caller then
// takes the general path, which encodes it again or answers an error.
func (c *Call) structuredFlat(tt *typedTool, text []byte, p unsafe.Pointer) bool {
	var out []byte
	mid, str := tt.oneMid, ""
	if mid != nil {
		str = *(*string)(unsafe.Add(p, tt.oneOff))
	}
	if mid == nil || !c.strs.plain(str) {
		var ok bool
		out, ok = tt.out.encodeStructured(codec.AppendStringBytes(c.openText(), text), p, &c.strs)
		if !ok {
			// No result set: the general way encodes the result again, and a
			// failure there must leave no half result (middleware sees
			// ResultType; a swallowed error would send the half as it is).
			c.out = out[:0]
			return false
		}
		out = append(out, c.srv.structTail...) // closes the response: complete need not
	} else if l, s := len(text), unsafe.Slice(unsafe.StringData(str), len(str)); l >= 8 && l <= 16 && l == len(s) &&
		binary.LittleEndian.Uint64(text) == binary.LittleEndian.Uint64(s) &&
		binary.LittleEndian.Uint64(text[l-8:]) == binary.LittleEndian.Uint64(s[l-8:]) {
		// Out is one string that needs no escape (an echo of a recorded
		// argument, strChunk.plain), and the text is that string (the
		// echo's): it is plain as the string is, so both are copied as
		// two words without the escape scan, and the whole response
		// takes one capacity check.
		lo, hi := binary.LittleEndian.Uint64(s), binary.LittleEndian.Uint64(s[l-8:])
		id, tail := c.env.ID, tt.oneTail
		t := len(responseHead) + len(id) + len(textHead) + 1 // the text's first byte
		m := t + l + len(mid)                                // str's
		e := m + l + len(tail)
		if out = c.out; cap(out) < e {
			out = make([]byte, 0, max(e+e, 512))
		}
		out = out[:e]
		// Every offset is below e = len(out): the parts are written
		// through out's base pointer, without a bounds check each.
		b := unsafe.Pointer(unsafe.SliceData(out))
		*(*[len(responseHead)]byte)(b) = responseHeadBytes
		if len(id) <= 16 {
			// Its two ends as words (textHead, written next, covers
			// what the second writes past the id).
			il, ih, k := wordEnds(id)
			putWord(b, len(responseHead), il)
			putWord(b, len(responseHead)+len(id)-k, ih)
		} else {
			copy(out[len(responseHead):], id)
		}
		*(*[len(textHead) + 1]byte)(unsafe.Add(b, t-len(textHead)-1)) = textHeadQuote
		putWord(b, t, lo)
		putWord(b, t+l-8, hi)
		if tt.midArr {
			*(*[len(tt.oneMidArr)]byte)(unsafe.Add(b, t+l)) = tt.oneMidArr
		} else {
			copy(unsafe.Slice((*byte)(unsafe.Add(b, t+l)), len(mid)), mid)
		}
		putWord(b, m, lo)
		putWord(b, m+l-8, hi)
		if tt.tailArr {
			// oneTail as its first and its last 64 bytes (they overlap):
			// arrays of tt, moves the compiler writes out, where a
			// memmove call costs more than these few bytes' copy.
			tt.putTail(unsafe.Add(b, m+l), len(tail))
		} else {
			copy(unsafe.Slice((*byte)(unsafe.Add(b, m+l)), len(tail)), tail)
		}
	} else {
		out = c.structuredOne(tt, text, s)
	}
	c.out = out
	c.result, c.open = true, false
	c.rkind = kindComplete
	c.esc = len(c.out) // every part the engine's own escaping encoders' (Request.ReplyEscaped)
	return true
}

// echoOne is structuredFlat's one-string case when it needs no call: the
// text is Out's one string (8 to 16 bytes, plain), the id has at most 16
// bytes, oneMid and oneTail are held as arrays (tt.echo: midArr and
// tailArr), and c.out has room for the response. A function that calls
// nothing keeps more of its values in registers: structuredFlat's calls
// (make, copy, the general encoder) have it save them on its stack on
// every call. Its caller has seen tt.echo (which implies tt.direct). It
// writes the same bytes as structuredFlat's one-string case, sets the
// result and reports true; false: nothing written,
// structuredFlat decides (the room made, a longer id or tail copied).
func (c *Call) echoOne(tt *typedTool, text []byte, p unsafe.Pointer) bool {
	if len(c.env.ID) > 16 {
		return false
	}
	str := *(*string)(unsafe.Add(p, tt.oneOff))
	l := len(text)
	if l < 8 || l > 16 || l != len(str) || !c.strs.plain(str) {
		return false
	}
	// Both ends as words read through the data pointers (8 <= l: in
	// bounds), not through slices, whose making and reslicing are tests
	// and masks.
	sp, tp := unsafe.Pointer(unsafe.StringData(str)), unsafe.Pointer(unsafe.SliceData(text))
	lo, hi := getWord(sp, 0), getWord(sp, l-8)
	if getWord(tp, 0) != lo || getWord(tp, l-8) != hi {
		return false
	}
	id := c.env.ID
	e := tt.echoFixed + len(id) + l + l
	if cap(c.out) < e {
		return false
	}
	// The result first (nothing below can fail): c and e need not be
	// kept across the writes.
	c.out = c.out[:e] // its length alone: the same array
	c.result, c.open = true, false
	c.rkind = kindComplete
	c.esc = e // every part the engine's own escaping encoders'
	// Every part is below e, the room checked: each is written at d,
	// which then moves past it (fewer values live than the parts'
	// offsets from the start).
	d := unsafe.Pointer(unsafe.SliceData(c.out))
	*(*[len(responseHead)]byte)(d) = responseHeadBytes
	il, ih, k := wordEnds(id)
	putWord(d, len(responseHead), il)
	putWord(d, len(responseHead)+len(id)-k, ih)
	d = unsafe.Add(d, len(responseHead)+len(id))
	*(*[len(textHead) + 1]byte)(d) = textHeadQuote
	d = unsafe.Add(d, len(textHead)+1)
	putWord(d, 0, lo)
	putWord(d, l-8, hi)
	d = unsafe.Add(d, l)
	*(*[len(tt.oneMidArr)]byte)(d) = tt.oneMidArr
	d = unsafe.Add(d, len(tt.oneMid))
	putWord(d, 0, lo)
	putWord(d, l-8, hi)
	d = unsafe.Add(d, l)
	tt.putTail(d, len(tt.oneTail))
	return true
}

// structuredOne writes the response of structuredFlat when Out is one
// string s that needs no escape (tt.oneMid) and the text is another:
// the head, the text escaped, s between two constant parts.
func (c *Call) structuredOne(tt *typedTool, text, s []byte) []byte {
	out := codec.AppendStringBytes(c.openText(), text)
	mid, tail := tt.oneMid[1:], tt.oneTail // oneMid's quote: AppendStringBytes'
	n := len(out)
	m := n + len(mid) + len(s)
	if e := m + len(tail); cap(out) >= e {
		out = out[:e]
		copy(out[n:], mid)
		if len(s) <= 16 {
			copyShort(out[n+len(mid):], s)
		} else {
			copy(out[n+len(mid):], s)
		}
		copy(out[m:], tail)
		return out
	}
	return append(append(append(out, mid...), s...), tail...)
}

// textHeadQuote is textHead and the text's opening quote.
var textHeadQuote = [len(textHead) + 1]byte([]byte(textHead + `"`))

// putTail writes oneTail, n bytes (tailArr: 64 to 192), at d as its
// arrays: the first 64 bytes, past 128 the 64 after them, and the last
// 64, overlapping what is before them. The caller has checked that d+n is
// within its slice. (Inlined: echoOne calls nothing.)
func (tt *typedTool) putTail(d unsafe.Pointer, n int) {
	*(*[64]byte)(d) = tt.oneTailLo
	if n > 2*64 {
		*(*[64]byte)(unsafe.Add(d, 64)) = tt.oneTailMid
	}
	*(*[64]byte)(unsafe.Add(d, n-64)) = tt.oneTailHi
}

// getWord loads the 8 bytes at b+i, little-endian, without a bounds
// check: the caller has checked that b+i+8 is within its slice or string.
func getWord(b unsafe.Pointer, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(b, i))[:])
}

// putWord stores x at b+i, little-endian, without a bounds check: the
// caller has checked that b+i+8 is within its slice.
func putWord(b unsafe.Pointer, i int, x uint64) {
	binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(b, i))[:], x)
}

// AddPrompt registers a typed prompt: h receives prompts/get's arguments
// decoded into In, a struct whose fields are strings (or *string), and
// returns the prompt's messages. When p.Arguments is empty it is inferred
// from In: each field's json name, its jsonschema tag as the description,
// required unless the field is a pointer or omitempty/omitzero. As for
// every prompt, a request without a required argument, or with an
// argument that is not a string, is answered -32602 naming it and h never
// runs. A handler that has set the result itself (Call.InputRequired)
// returns the zero PromptResult and nil.
func AddPrompt[In any](s *Server, p Prompt, h func(c *Call, in In) (mcp.PromptResult, error)) error {
	if h == nil {
		return fmt.Errorf("engine: prompt %q: %w", p.Name, errNoHandler)
	}
	t := reflect.TypeFor[In]()
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("engine: prompt %q: %s: %w", p.Name, t, errPromptArgs)
	}
	var args []mcp.PromptArgument
	for _, f := range fields(t) {
		ft := f.field.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() != reflect.String {
			return fmt.Errorf("engine: prompt %q: field %s: %w", p.Name, f.field.Name, errPromptArgs)
		}
		args = append(args, mcp.PromptArgument{Name: f.name, Description: f.field.Tag.Get("jsonschema"), Required: !f.optional})
	}
	if len(p.Arguments) == 0 {
		p.Arguments = args
	}
	_ = codec.Pretouch(t)
	p.Handler = func(c *Call) error {
		var in In
		a := c.env.Arguments
		if a == nil {
			a = emptyObject
		}
		if err := codec.Unmarshal(a, &in); err != nil {
			return bindError(a, &in)
		}
		res, err := h(c, in)
		if err != nil || c.result {
			return err
		}
		return c.Return(res)
	}
	return s.AddPrompt(p)
}
