// Package socket is the client side of the TCP and Unix-socket transport:
// Dialer returns a client.Dialer for the line framing served by package
// transport/socket (CUST-04). Use it with client.NewLineTransport, which
// re-dials after a lost connection and re-opens listen streams.
package socket
