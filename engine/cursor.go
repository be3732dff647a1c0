package engine

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"

	"github.com/mcpwire/mcpwire/codec"
)

// List cursors (tools/list, prompts/list, resources/list,
// resources/templates/list; schema: PaginatedRequestParams.cursor and
// PaginatedResult.nextCursor).
//
// A cursor names a position, not a snapshot: it holds the key (tool or
// prompt name, resource URI, URI template) of the last entry of the page
// it follows, and the next page starts with the first entry whose key
// sorts after it (keyset paging). Nothing is kept on the server, so any
// replica with the same catalogue serves the next page, and a cursor
// outlives restarts. When the catalogue changes between two pages, the
// listing goes on after that key in the catalogue as it is then: an entry
// present during the whole listing is listed exactly once; an entry added
// behind the position is not seen by this pass and one removed ahead of
// it is not listed (the list_changed cue tells listeners to list again).
//
// On the wire a cursor is base64url without padding of
//
//	version (1 byte, cursorVersion)
//	kind    (1 byte: which list, and for resources/list which part)
//	key     (the last key sent, or the ResourceLister's own cursor)
//	check   (4 bytes: CRC-32C of the bytes above, seeded with a domain
//	         string, big-endian)
//
// The check makes a cursor that was cut, edited or made by another
// implementation fail as a whole instead of decoding to a random
// position. It is not a signature: a cursor grants nothing its holder
// could not reach by paging from the start (every page applies
// Config.ToolFilter again), so anyone may forge one; a ResourceLister
// must treat the cursor it gets back as untrusted input.

// cursorVersion is the first byte of every cursor this engine issues.
const cursorVersion = 1

// Cursor kinds: the list a cursor belongs to.
const (
	cursorTools     = 'T' // tools/list, after the tool named key
	cursorPrompts   = 'P' // prompts/list, after the prompt named key
	cursorResources = 'R' // resources/list, registered resources after URI key
	cursorLister    = 'L' // resources/list, the ResourceLister's part; key is its cursor
	cursorTemplates = 'U' // resources/templates/list, after URI template key
)

// maxCursor bounds a cursor as received, in bytes of its JSON string
// (64 KiB): longer ones are refused before they are decoded. Keys and
// lister cursors up to about 48 KiB fit.
const maxCursor = 64 << 10

// maxCursorKey is the longest key or lister cursor a cursor can carry
// within maxCursor.
const maxCursorKey = maxCursor/4*3 - 6

var (
	cursorEnc   = base64.RawURLEncoding.Strict()
	cursorTable = crc32.MakeTable(crc32.Castagnoli)
	// cursorSeed is the check's starting value: cursors of another
	// format that happen to end in a CRC of their own bytes still fail.
	cursorSeed = crc32.Checksum([]byte("mcpwire list cursor"), cursorTable)
)

// Refusals of a cursor (-32602, TRANSPORTS §1.4: bad cursor). Shared
// values: refusing allocates nothing.
var (
	errCursorType    = codec.NewError(codec.CodeInvalidParams, "Invalid params: cursor must be a string")
	errCursorLong    = codec.NewError(codec.CodeInvalidParams, "Invalid params: cursor too long")
	errBadCursor     = codec.NewError(codec.CodeInvalidParams, "Invalid params: invalid cursor")
	errForeignCursor = codec.NewError(codec.CodeInvalidParams, "Invalid params: cursor belongs to another list")
)

// appendCursor appends the encoded cursor of kind and key to dst, using
// tmp for the raw bytes; it returns both buffers for reuse.
func appendCursor(dst, tmp []byte, kind byte, key string) ([]byte, []byte) {
	tmp = append(tmp[:0], cursorVersion, kind)
	tmp = append(tmp, key...)
	tmp = binary.BigEndian.AppendUint32(tmp, crc32.Update(cursorSeed, cursorTable, tmp))
	return cursorEnc.AppendEncode(dst, tmp), tmp
}

// decodeCursor checks an encoded cursor and appends its kind byte and key
// to dst (dst[0] is the kind, dst[1:] the key). The error is one of the
// shared refusals above.
func decodeCursor(dst, enc []byte) ([]byte, *codec.Error) {
	if len(enc) > maxCursor {
		return dst, errCursorLong
	}
	raw, err := cursorEnc.AppendDecode(dst[:0], enc)
	if err != nil || len(raw) < 6 || raw[0] != cursorVersion {
		return raw[:0], errBadCursor
	}
	body, sum := raw[:len(raw)-4], binary.BigEndian.Uint32(raw[len(raw)-4:])
	if crc32.Update(cursorSeed, cursorTable, body) != sum {
		return raw[:0], errBadCursor
	}
	switch body[1] {
	case cursorTools, cursorPrompts, cursorResources, cursorTemplates:
		if len(body) == 2 {
			return raw[:0], errBadCursor // no entry has an empty key; never issued
		}
	case cursorLister:
	default:
		return raw[:0], errBadCursor
	}
	// Drop the version: dst holds kind and key.
	return append(raw[:0], body[1:]...), nil
}

// readCursor reads params.cursor of a list request into c.cursor (kind,
// then key; empty for the first page) and checks that it belongs to the
// method's list. Called by CheckTarget, so a bad cursor never reaches a
// middleware or handler.
func (c *Call) readCursor() *codec.Error {
	c.cursor = c.cursor[:0]
	raw, ok := codec.LookupPath(c.env.Params, "cursor")
	if !ok {
		return nil
	}
	if len(raw) < 2 || raw[0] != '"' {
		return errCursorType
	}
	if len(raw) > maxCursor+2 {
		return errCursorLong
	}
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		// A client may escape any character of a JSON string; no base64url
		// character needs it, so this is rare.
		c.scratch = codec.Str{Raw: s, Escaped: true, Present: true}.AppendUnescaped(c.scratch[:0])
		s = c.scratch
	}
	var e *codec.Error
	c.cursor, e = decodeCursor(c.cursor, s)
	if e != nil {
		c.cursor = c.cursor[:0]
		return e
	}
	if !c.method.list.accepts(c.cursor[0], c.srv.opt.ResourceLister != nil) {
		c.cursor = c.cursor[:0]
		return errForeignCursor
	}
	return nil
}

// accepts reports whether a cursor of kind continues list l.
func (l listKind) accepts(kind byte, lister bool) bool {
	switch l {
	case listTools:
		return kind == cursorTools
	case listPrompts:
		return kind == cursorPrompts
	case listResources:
		return kind == cursorResources || (kind == cursorLister && lister)
	case listTemplates:
		return kind == cursorTemplates
	}
	return false
}
