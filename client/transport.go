package client

import (
	"context"
	"errors"
	"fmt"
)

// Transport carries a Client's messages to one server. Implementations:
// NewLineTransport (stdio and sockets: one byte stream, replies matched by
// id), client/streamhttp's Dial (Streamable HTTP: one POST per request).
//
// Open and Notify may be called from many goroutines at once; Close is
// idempotent and ends every open Exchange.
type Transport interface {
	// Open sends one request and returns the exchange that yields what the
	// server sends for it: request-scoped notifications (progress, log
	// messages, a listen stream's notifications) and then the response.
	// An error wrapping ErrNotDelivered means the server cannot have seen
	// the request (the caller may re-send it with a new id, SSE-09).
	Open(ctx context.Context, out *Outgoing) (Exchange, error)
	// Notify sends a notification; no reply is expected.
	Notify(ctx context.Context, out *Outgoing) error
	// Close ends the transport (a spawned stdio server is stopped).
	Close() error
}

// Exchange is the server's side of one request. Next and Close may be
// called from different goroutines; Next from one goroutine at a time.
type Exchange interface {
	// Next blocks for the next message of the exchange. It returns the
	// response as the last message (then io.EOF on later calls), or an
	// error: ErrDropped (the stream broke before the response: the request
	// is lost, SSE-09, STD-14), *StatusError (an HTTP reply that carries no
	// JSON-RPC message), ctx.Err(). The slice is the caller's to keep.
	Next(ctx context.Context) ([]byte, error)
	// Close abandons the exchange. Before the response has arrived this is
	// the request's cancellation: HTTP closes the reply stream (HCAN-01),
	// a line stream sends notifications/cancelled (STD-10, SUB-09).
	Close() error
}

// Header is one request header a Streamable HTTP transport adds
// (Mcp-Param-*, PARAM-04); other transports ignore headers.
type Header struct{ Name, Value string }

// Outgoing is one message as the Client hands it to a transport.
type Outgoing struct {
	ID      []byte // raw JSON id token (`7`); nil for a notification
	Method  string
	Name    string // Mcp-Name source (tools/call, prompts/get: params.name; resources/read: params.uri)
	HasName bool
	Version string   // protocol revision: MCP-Protocol-Version on HTTP (HDR-01)
	Headers []Header // Mcp-Param-* (PARAM-05, PARAM-06), already encoded (B64-01)
	Token   []byte   // raw progressToken, when the request carries one (PROG-01)
	Listen  bool     // subscriptions/listen: long-lived, no read deadline
	// Handshake marks the legacy initialize exchange a transport's connect
	// hook sends (it does not wait for the hook itself).
	Handshake bool
	Body      []byte // the complete JSON-RPC message, no trailing newline
}

// Errors a transport reports.
var (
	// ErrNotDelivered: the request never reached the server (dial failed,
	// or the connection failed before a byte of the reply arrived on a
	// connection that may have been closed by the peer while idle).
	ErrNotDelivered = errors.New("client: request not delivered")
	// ErrDropped: the stream ended before the response; the server may
	// have done the work. SSE-09: re-send as a new request if wanted.
	ErrDropped = errors.New("client: connection lost before the response")
	// ErrClosed: the transport or client was closed.
	ErrClosed = errors.New("client: closed")
	// ErrSlowConsumer: the caller left too many messages unread on one
	// exchange; it was cancelled to bound memory.
	ErrSlowConsumer = errors.New("client: too many unread messages")
	// ErrTooLarge: a message exceeded the size limit.
	ErrTooLarge = errors.New("client: message too large")
)

// StatusError is an HTTP reply whose body is not a JSON-RPC message (or
// an HTTP reply status the transport does not accept for the request).
type StatusError struct {
	Status int
	Body   []byte // at most the first 512 bytes
}

func (e *StatusError) Error() string {
	if len(e.Body) > 0 {
		return fmt.Sprintf("client: HTTP %d: %.200q", e.Status, e.Body)
	}
	return fmt.Sprintf("client: HTTP %d", e.Status)
}

// ConnectHook runs on each new connection before other requests use it;
// the Client installs one to redo the legacy initialize after a restart
// (DISC-06, STD-14). send opens Handshake exchanges on that connection.
type ConnectHook func(ctx context.Context) error

// hookSetter is implemented by transports that (re)connect.
type hookSetter interface{ SetConnectHook(ConnectHook) }

// eraSetter is implemented by transports whose wire depends on the era
// (HTTP sends Mcp-Session-Id in 2025-11-25 and moves to HTTP+SSE for
// 2024-11-05).
type eraSetter interface {
	// SwitchEra moves the transport to era e. For Era2024 it opens the
	// HTTP+SSE stream and waits for its endpoint event (COMPAT-04).
	SwitchEra(ctx context.Context, e Era) error
}

// connector is implemented by transports that can be asked to have a
// live connection now; fresh reports that a new one was made (and the
// connect hook ran on it).
type connector interface {
	Connect(ctx context.Context) (fresh bool, err error)
}

// statusReporter is implemented by exchanges that know an HTTP status.
type statusReporter interface{ Status() int }
