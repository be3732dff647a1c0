package codec

import "strconv"

// Code is a JSON-RPC 2.0 error code. The constants below are every code of
// the error table in TRANSPORTS.md §1.4 that this revision lets a server
// emit (ERR-01: codes in -32020…-32099 are used only with their spec meaning).
type Code int32

// JSON-RPC and MCP error codes (TRANSPORTS.md §1.4).
const (
	CodeParseError                      Code = -32700 // invalid JSON or invalid UTF-8 (GEN-02)
	CodeInvalidRequest                  Code = -32600 // not a valid request/notification; batch arrays (GEN-09)
	CodeMethodNotFound                  Code = -32601 // unknown, removed or not advertised method (HDR-08)
	CodeInvalidParams                   Code = -32602 // bad params; missing _meta keys (META-03)
	CodeInternalError                   Code = -32603 // handler failure; in-band, never a blanket 500
	CodeHeaderMismatch                  Code = -32020 // mirrored header missing, malformed or ≠ body (HVAL-01)
	CodeMissingRequiredClientCapability Code = -32021 // META-08
	CodeUnsupportedProtocolVersion      Code = -32022 // DISC-04
)

// HTTPStatus is the Streamable HTTP status for a response carrying code c
// (TRANSPORTS.md §1.4 and §4.8): -32601 → 404; -32020, -32021, -32022 and
// (our choice) -32700, -32600 → 400; everything else, -32602 and -32603
// included, → 200 with the error in-band. -32602 for missing _meta keys must
// be 400: set Error.Status for that case (META-03).
func (c Code) HTTPStatus() int {
	switch c {
	case CodeMethodNotFound:
		return 404
	case CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion,
		CodeParseError, CodeInvalidRequest:
		return 400
	default:
		return 200
	}
}

// String returns the code's name, e.g. "ParseError", or "Code(-32000)" for a
// code without a name.
func (c Code) String() string {
	switch c {
	case CodeParseError:
		return "ParseError"
	case CodeInvalidRequest:
		return "InvalidRequest"
	case CodeMethodNotFound:
		return "MethodNotFound"
	case CodeInvalidParams:
		return "InvalidParams"
	case CodeInternalError:
		return "InternalError"
	case CodeHeaderMismatch:
		return "HeaderMismatch"
	case CodeMissingRequiredClientCapability:
		return "MissingRequiredClientCapability"
	case CodeUnsupportedProtocolVersion:
		return "UnsupportedProtocolVersion"
	}
	return "Code(" + strconv.Itoa(int(c)) + ")"
}

// Error is a JSON-RPC error object plus the HTTP status it travels with.
//
// Message is sent to the peer: keep it one short sentence with no internal
// detail (GEN-06). The sentinel values below are shared; never modify them,
// copy first (e := *ErrParse).
type Error struct {
	Code    Code
	Message string
	Data    []byte // raw JSON for "data"; nil = member omitted
	Status  int    // HTTP status override; 0 => Code.HTTPStatus()
}

// Error implements error: "codec: <Name> (<code>): <message>".
func (e *Error) Error() string {
	return "codec: " + e.Code.String() + " (" + strconv.Itoa(int(e.Code)) + "): " + e.Message
}

// Is reports whether target is an *Error with the same Code, so
// errors.Is(err, ErrBadID) is true for every -32600 error. Compare with ==
// to tell two sentinels with the same code apart.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && e != nil && t.Code == e.Code
}

// HTTPStatus returns e.Status when set, else e.Code.HTTPStatus().
func (e *Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	return e.Code.HTTPStatus()
}

// NewError returns a new *Error with the given code and peer-visible message.
func NewError(code Code, msg string) *Error {
	return &Error{Code: code, Message: msg}
}

// Sentinel errors returned by Peek and PeekWith. They are returned as is
// (no allocation on the error path). Their Message is what the peer sees.
var (
	ErrParse        = &Error{Code: CodeParseError, Message: "Parse error"}
	ErrInvalidUTF8  = &Error{Code: CodeParseError, Message: "Parse error: invalid UTF-8"}
	ErrBatch        = &Error{Code: CodeInvalidRequest, Message: "Invalid Request: batch arrays are not supported"}
	ErrNotObject    = &Error{Code: CodeInvalidRequest, Message: "Invalid Request: message must be a JSON object"}
	ErrBadVersion   = &Error{Code: CodeInvalidRequest, Message: `Invalid Request: jsonrpc must be "2.0"`}
	ErrBadID        = &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id must be a string or an integer"}
	ErrNoMethod     = &Error{Code: CodeInvalidRequest, Message: "Invalid Request: missing method"}
	ErrBadMethod    = &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method must be a string"}
	ErrBadParams    = &Error{Code: CodeInvalidRequest, Message: "Invalid Request: params must be an object"}
	ErrDuplicateKey = &Error{Code: CodeInvalidRequest, Message: "Invalid Request: duplicate or case-variant member"}
	ErrTooDeep      = &Error{Code: CodeInvalidRequest, Message: "Invalid Request: nesting too deep"}
	// ErrBadResponse: a response (no method) carrying both "result" and "error".
	ErrBadResponse = &Error{Code: CodeInvalidRequest, Message: "Invalid Request: response must carry exactly one of result or error"}
)
