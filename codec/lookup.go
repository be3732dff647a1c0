package codec

import "bytes"

// LookupPath finds the value at path inside the raw JSON object obj, path
// being object member names only (["region"], ["a", "b"]). It is meant for
// spans Peek already validated (Envelope.Arguments: PARAM-05 extraction) and
// does not allocate, but it still checks the syntax of every object it walks
// and returns ok == false for anything malformed or truncated, so it never
// returns a value from a broken input.
//
// Member names match exactly after unescaping (case-sensitive, as sonic with
// CaseSensitive decodes them). When a member is repeated, the last one wins,
// which is what sonic and encoding/json hand to a handler; use
// LookupPathStrict to reject repeats instead. raw aliases obj. An empty path
// returns obj itself (without surrounding whitespace) when it is valid JSON.
func LookupPath(obj []byte, path ...string) (raw []byte, ok bool) {
	raw, found, _, _ := lookup(obj, path)
	return raw, found
}

// LookupPathStrict is LookupPath, but a member name on the path that occurs
// more than once in its object yields ErrDuplicateKey (a proxy that takes
// the first value and a handler that takes the last must never disagree).
// Malformed input yields ErrParse or ErrInvalidUTF8.
func LookupPathStrict(obj []byte, path ...string) (raw []byte, found bool, err error) {
	raw, found, dup, code := lookup(obj, path)
	switch {
	case code == scanErrUTF8:
		return nil, false, ErrInvalidUTF8
	case code < 0:
		return nil, false, ErrParse
	case dup:
		return nil, false, ErrDuplicateKey
	}
	return raw, found, nil
}

// LookupString is LookupPath for one member that must be a JSON string.
func LookupString(obj []byte, key string) (Str, bool) {
	raw, ok := LookupPath(obj, key)
	if !ok || len(raw) < 2 || raw[0] != '"' {
		return Str{}, false
	}
	return Str{Raw: raw[1 : len(raw)-1], Escaped: bytes.IndexByte(raw, '\\') >= 0, Present: true}, true
}

// ArgString is LookupString(e.Arguments, key), from the members Peek
// recorded (Envelope.PlainArguments) when it did: no scan of the
// arguments, and no escape to look for (a recorded string is plain).
// (Comparing short names without the runtime's memequal measured no
// better: profiles/README.handler9.md.)
// Otherwise it scans them as LookupString does. Same results either way
// (TestArgStringRecorded, FuzzArgString): a repeated name's last member
// wins, and a member that is not a string is not found.
func (e *Envelope) ArgString(key string) (Str, bool) {
	n := e.PlainArguments()
	if n < 0 {
		return LookupString(e.Arguments, key)
	}
	a := e.Arguments
	hit := -1
	for j := range n {
		m := e.args[j&(maxArgMembers-1)]
		k, ke := int(uint16(m)), int(uint16(m>>16))
		if ke-k == len(key) && string(a[k:ke]) == key {
			hit = j // the last one wins
		}
	}
	if hit < 0 {
		return Str{}, false
	}
	m := e.args[hit&(maxArgMembers-1)]
	v, ve := int(uint16(m>>32)), int(uint16(m>>48))
	if a[v] != '"' {
		return Str{}, false
	}
	return Str{Raw: a[v+1 : ve-1], Present: true}, true
}

// lookup walks path. code is 0 or the scanErr* that stopped it. The
// outermost value is always scanned to its end (and checked for trailing
// bytes), so a truncated or malformed obj is never reported as found; each
// object on the path is scanned completely, so the last repeat wins.
func lookup(obj []byte, path []string) (raw []byte, found, dup bool, code int) {
	var sk skipper
	sk.max = MaxDepthLimit
	start := skipWS(obj, 0)
	if start >= len(obj) {
		return nil, false, false, scanErrParse
	}
	if len(path) == 0 || obj[start] != '{' {
		e := sk.skip(obj, start, 0)
		if e < 0 {
			return nil, false, false, e
		}
		if skipWS(obj, e) != len(obj) {
			return nil, false, false, scanErrParse
		}
		if len(path) == 0 {
			return obj[start:e], true, false, 0
		}
		return nil, false, false, 0 // valid, but not an object
	}
	cur := obj[start:]
	for depth, name := range path {
		if len(cur) == 0 || cur[0] != '{' {
			return nil, false, dup, 0 // walked into a non-object
		}
		var val []byte
		hit := false
		i := skipWS(cur, 1)
		if i < len(cur) && cur[i] == '}' {
			i++
		} else {
			for {
				key, fl, v := member(cur, i)
				if v < 0 {
					return nil, false, false, v
				}
				e := sk.skip(cur, v, 1)
				if e < 0 {
					return nil, false, false, e
				}
				if keyIs(key, fl, name) {
					dup = dup || hit
					val, hit = cur[v:e], true
				}
				var done bool
				if i, done = next(cur, e); i < 0 {
					return nil, false, false, i
				} else if done {
					break
				}
			}
		}
		if depth == 0 && skipWS(cur, i) != len(cur) {
			return nil, false, false, scanErrParse // trailing bytes after the object
		}
		if !hit {
			return nil, false, dup, 0
		}
		cur = val
	}
	return cur, true, dup, 0
}

func keyIs(key []byte, fl uint8, name string) bool {
	if fl&strEscaped == 0 {
		return string(key) == name
	}
	return equalEscaped(key, name)
}

// member reads one member at b[i] (whitespace before it allowed) with the
// shared rules: the string rule for the name, then colon. It returns the
// name's raw bytes, its scan flags and the index of the value.
func member(b []byte, i int) ([]byte, uint8, int) {
	if i = skipWS(b, i); uint(i) >= uint(len(b)) || b[i] != '"' {
		return nil, 0, scanErrParse
	}
	e, fl := scanString(b, i+1)
	if e < 0 {
		return nil, 0, e
	}
	v := colon(b, e)
	if v < 0 {
		return nil, 0, v
	}
	if v = skipWS(b, v); v >= len(b) {
		return nil, 0, scanErrParse
	}
	return b[i+1 : e-1], fl, v
}

// next moves past the separator after a member value with sep. It returns
// the index after a ',', or the index just past '}' and true when the
// object ended.
func next(b []byte, i int) (int, bool) {
	i, c := sep(b, i)
	switch c {
	case ',':
		return i, false
	case '}':
		return i, true
	}
	return scanErrParse, false
}

// LookupMembers scans the members of the object obj once and sets vals[i]
// to the raw value of the member named names[i], or nil when it is absent
// (len(vals) must be at least len(names)). It returns ErrDuplicateKey when
// one of names appears more than once, ErrParse for malformed input, and
// nil otherwise; obj that is not an object yields all nils. Zero
// allocation: it is the header check's one pass over params.arguments.
func LookupMembers(obj []byte, names []string, vals [][]byte) error {
	_, err := ScanMembers(obj, names, vals)
	return err
}

// ScanMembers is LookupMembers that also counts the members of obj (0 when
// obj is not an object), so that a caller can tell whether obj has members
// other than names (a closed schema's check) in the same pass.
func ScanMembers(obj []byte, names []string, vals [][]byte) (members int, err error) {
	for i := range names {
		vals[i] = nil
	}
	var sk skipper
	sk.max = MaxDepthLimit
	start := skipWS(obj, 0)
	if start >= len(obj) {
		return 0, ErrParse
	}
	if obj[start] != '{' {
		return 0, nil
	}
	cur := obj[start:]
	i := skipWS(cur, 1)
	if i < len(cur) && cur[i] == '}' {
		return 0, nil
	}
	for {
		key, fl, v := member(cur, i)
		if v < 0 {
			return members, ErrParse
		}
		e := sk.skip(cur, v, 1)
		if e < 0 {
			return members, ErrParse
		}
		members++
		for n, name := range names {
			if keyIs(key, fl, name) {
				if vals[n] != nil {
					return members, ErrDuplicateKey
				}
				vals[n] = cur[v:e]
			}
		}
		var done bool
		if i, done = next(cur, e); i < 0 {
			return members, ErrParse
		} else if done {
			return members, nil
		}
	}
}
