package codec

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCodeHTTPStatus pins the TRANSPORTS.md §1.4 error table (ERR-*,
// HDR-08, META-03, META-08, DISC-04, HVAL-01).
func TestCodeHTTPStatus(t *testing.T) {
	cases := []struct {
		code   Code
		status int
		name   string
	}{
		{CodeParseError, 400, "ParseError"},         // REC 400
		{CodeInvalidRequest, 400, "InvalidRequest"}, // REC 400
		{CodeMethodNotFound, 404, "MethodNotFound"}, // MUST 404 (HDR-08)
		{CodeInvalidParams, 200, "InvalidParams"},   // (b) REC 200 in-band; (a) set Status 400
		{CodeInternalError, 200, "InternalError"},   // REC 200, never a blanket 500
		{CodeHeaderMismatch, 400, "HeaderMismatch"}, // MUST 400
		{CodeMissingRequiredClientCapability, 400, "MissingRequiredClientCapability"},
		{CodeUnsupportedProtocolVersion, 400, "UnsupportedProtocolVersion"},
		{-32000, 200, "Code(-32000)"},
		{42, 200, "Code(42)"},
	}
	for i, c := range cases {
		if got := c.code.HTTPStatus(); got != c.status {
			t.Errorf("#%d %d.HTTPStatus() = %d, want %d", i, c.code, got, c.status)
		}
		if got := c.code.String(); got != c.name {
			t.Errorf("#%d String() = %q, want %q", i, got, c.name)
		}
	}
	// The exact numeric values of the table.
	for i, c := range []struct {
		got  Code
		want int32
	}{
		{CodeParseError, -32700}, {CodeInvalidRequest, -32600}, {CodeMethodNotFound, -32601},
		{CodeInvalidParams, -32602}, {CodeInternalError, -32603}, {CodeHeaderMismatch, -32020},
		{CodeMissingRequiredClientCapability, -32021}, {CodeUnsupportedProtocolVersion, -32022},
	} {
		if int32(c.got) != c.want {
			t.Errorf("#%d: %d != %d", i, c.got, c.want)
		}
	}
}

func TestErrorMethods(t *testing.T) {
	e := NewError(CodeInvalidParams, "Invalid params: missing _meta keys")
	if e.HTTPStatus() != 200 {
		t.Errorf("in-band -32602: %d", e.HTTPStatus())
	}
	e.Status = 400 // META-03: missing _meta → 400
	if e.HTTPStatus() != 400 {
		t.Errorf("override: %d", e.HTTPStatus())
	}
	if got := e.Error(); !strings.HasPrefix(got, "codec: ") || !strings.Contains(got, "-32602") {
		t.Errorf("Error() = %q", got)
	}
	wrapped := fmt.Errorf("engine: %w", ErrBadID)
	if !errors.Is(wrapped, ErrBadID) || !errors.Is(wrapped, ErrNoMethod) || errors.Is(wrapped, ErrParse) {
		t.Error("errors.Is must compare codes")
	}
	if !errors.Is(wrapped, NewError(CodeInvalidRequest, "other text")) {
		t.Error("errors.Is with a fresh *Error of the same code")
	}
	var target *Error
	if !errors.As(wrapped, &target) || target != ErrBadID {
		t.Error("errors.As")
	}
	if ErrBadID.Is(nil) || ErrBadID.Is(errors.New("x")) || ErrBadID.Is((*Error)(nil)) {
		t.Error("Is with non-*Error")
	}
	// Sentinels: the right codes, peer-safe messages.
	for i, s := range []*Error{ErrParse, ErrInvalidUTF8} {
		if s.Code != CodeParseError || s.HTTPStatus() != 400 {
			t.Errorf("#%d parse sentinel %+v", i, s)
		}
	}
	for i, s := range []*Error{ErrBatch, ErrNotObject, ErrBadVersion, ErrBadID, ErrNoMethod, ErrBadMethod, ErrBadParams, ErrDuplicateKey, ErrTooDeep, ErrBadResponse} {
		if s.Code != CodeInvalidRequest || s.HTTPStatus() != 400 || s.Data != nil || strings.Contains(s.Message, "codec") {
			t.Errorf("#%d invalid-request sentinel %+v", i, s)
		}
	}
	if ErrBadHeaderEncoding.Code != CodeHeaderMismatch || ErrBadHeaderEncoding.HTTPStatus() != 400 {
		t.Error("ErrBadHeaderEncoding")
	}
}
