package mrtr

import (
	"errors"

	"github.com/mcpwire/mcpwire/codec"
)

// Reasons a requestState or an input response is refused. Each is the
// Reason of an *Error; test for them with errors.Is.
var (
	// ErrStateMalformed: requestState is not a string, is empty or too long,
	// is not two base64url parts, or does not carry this package's format.
	// A truncated, padded or hand-edited token usually ends here.
	ErrStateMalformed = errors.New("mrtr: requestState is malformed")
	// ErrStateForeignKey: the state names a key the signer does not hold:
	// another deployment's state, or one signed with a key since retired.
	ErrStateForeignKey = errors.New("mrtr: requestState was signed with a key this server does not hold")
	// ErrStateTampered: the key is ours but the integrity tag does not
	// match: the token was modified.
	ErrStateTampered = errors.New("mrtr: requestState failed its integrity check")
	// ErrStateExpired: the state is authentic but older than its TTL.
	ErrStateExpired = errors.New("mrtr: requestState has expired")
	// ErrStateWrongPrincipal: the state was issued to another principal
	// (or to an anonymous caller, and this one is authenticated, or the
	// reverse).
	ErrStateWrongPrincipal = errors.New("mrtr: requestState was issued to another principal")
	// ErrStateWrongTarget: the state was issued for another method or
	// another tool, prompt or resource.
	ErrStateWrongTarget = errors.New("mrtr: requestState was issued for another request target")
	// ErrStateWrongArguments: the state was issued for other arguments.
	ErrStateWrongArguments = errors.New("mrtr: requestState was issued for other arguments")

	// ErrResponsesMalformed: params.inputResponses is present but is not
	// a JSON object.
	ErrResponsesMalformed = errors.New("mrtr: inputResponses is not an object")
	// ErrResponseMissing: inputResponses has no member under the key.
	// MRTR-11 asks a server to ask again (a new InputRequiredResult)
	// rather than fail, so handlers usually branch on it.
	ErrResponseMissing = errors.New("mrtr: input response missing")
	// ErrResponseMalformed: the member under the key is not the result the
	// request asked for (an ElicitResult, a CreateMessageResult, a
	// ListRootsResult), or does not fit the type it is decoded into.
	ErrResponseMalformed = errors.New("mrtr: input response malformed")
)

// Error is how this package refuses a request: a -32602 Invalid params
// answer (TRANSPORTS.md §1.4: failed requestState verification is -32602)
// with a one-line message for the peer, and the Reason, one of the Err*
// values above. A handler returns it as it is: the engine finds the
// *codec.Error inside (errors.As) and answers with it. The message never
// quotes the peer's input: it names the failed check and, for responses,
// the server's own key.
type Error struct {
	Reason error
	rpc    *codec.Error
}

func newError(reason error, msg string) *Error {
	return &Error{Reason: reason, rpc: codec.NewError(codec.CodeInvalidParams, msg)}
}

// Error returns the message the peer sees ("Invalid params: …").
func (e *Error) Error() string { return e.rpc.Message }

// Unwrap returns the Reason and the -32602 *codec.Error, so errors.Is
// matches the reason and errors.As finds the JSON-RPC error.
func (e *Error) Unwrap() []error { return []error{e.Reason, e.rpc} }

// The answers to a refused requestState. They are shared: one value per
// reason, no allocation on the rejection path.
var (
	errStateMalformed      = newError(ErrStateMalformed, "Invalid params: requestState is malformed")
	errStateForeignKey     = newError(ErrStateForeignKey, "Invalid params: requestState was signed with a key this server does not hold")
	errStateTampered       = newError(ErrStateTampered, "Invalid params: requestState failed its integrity check")
	errStateExpired        = newError(ErrStateExpired, "Invalid params: requestState has expired; retry without it to start over")
	errStateWrongPrincipal = newError(ErrStateWrongPrincipal, "Invalid params: requestState was issued to another principal")
	errStateWrongArguments = newError(ErrStateWrongArguments, "Invalid params: requestState was issued for other arguments")
	errResponsesMalformed  = newError(ErrResponsesMalformed, "Invalid params: inputResponses must be an object")
)

// The wrong-target answer names what kind of target the request has.
var (
	errStateWrongTool     = newError(ErrStateWrongTarget, "Invalid params: requestState was issued for another tool")
	errStateWrongPrompt   = newError(ErrStateWrongTarget, "Invalid params: requestState was issued for another prompt")
	errStateWrongResource = newError(ErrStateWrongTarget, "Invalid params: requestState was issued for another resource")
	errStateWrongRequest  = newError(ErrStateWrongTarget, "Invalid params: requestState was issued for another request")
)

func wrongTarget(method string) *Error {
	switch method {
	case "tools/call":
		return errStateWrongTool
	case "prompts/get":
		return errStateWrongPrompt
	case "resources/read":
		return errStateWrongResource
	}
	return errStateWrongRequest
}

// responseError is the -32602 for the response under key. The key is the
// server's own (the handler passes it), never a key the peer chose; it is
// still shortened and escaped, since a handler may build it from input.
func responseError(reason error, key, what string) *Error {
	return newError(reason, "Invalid params: inputResponses."+safeKey(key)+" "+what)
}

// safeKey bounds a key to 64 bytes of printable ASCII for a message.
func safeKey(k string) string {
	const max = 64
	b := make([]byte, 0, min(len(k), max+3))
	for i := 0; i < len(k); i++ {
		if len(b) >= max {
			return string(b) + "..."
		}
		c := k[i]
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		b = append(b, c)
	}
	return string(b)
}
