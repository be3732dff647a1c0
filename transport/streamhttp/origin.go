package streamhttp

import (
	"bytes"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// normalizeOrigin returns the canonical form of an Origin value
// (SEC-02): lowercase scheme and host, default port dropped, no trailing
// slash. ok is false for "null", values with a path, query or user info,
// and anything unparsable.
func normalizeOrigin(v string) (string, bool) {
	v = strings.TrimSuffix(v, "/")
	scheme, rest, found := strings.Cut(v, "://")
	if !found || rest == "" {
		return "", false
	}
	scheme = strings.ToLower(scheme)
	if scheme != "http" && scheme != "https" {
		return "", false
	}
	// No path, query, fragment, user info or white space; no '%' either: a
	// percent-encoded host or an IPv6 zone is not something browsers send,
	// and readers disagree on its decoding.
	if strings.ContainsAny(rest, "/?#@ \t%") {
		return "", false
	}
	host, port := rest, ""
	if h, p, err := net.SplitHostPort(rest); err == nil {
		host, port = h, p
		if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
			return "", false
		}
	} else if strings.HasPrefix(rest, "[") && strings.HasSuffix(rest, "]") {
		host = rest[1 : len(rest)-1]
	} else if strings.ContainsAny(rest, ":[]") {
		return "", false // an IPv6 literal without brackets, or a stray one
	}
	if host == "" || !validOriginHost(host, strings.HasPrefix(rest, "[")) {
		return "", false
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return "", false
		}
	}
	host = strings.ToLower(host)
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		return scheme + "://" + host + ":" + port, true
	}
	return scheme + "://" + host, true
}

// validOriginHost accepts a DNS name (ASCII letters, digits, '-', '.', '_')
// or, bracketed, an IPv6 literal: an Origin's host is ASCII (RFC 6454 serializes IDNs
// as punycode), and anything else is refused rather than guessed at.
func validOriginHost(h string, bracketed bool) bool {
	if bracketed {
		ip, err := netip.ParseAddr(h)
		return err == nil && ip.Is6() && ip.Zone() == ""
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// originSet is a normalised allow-list.
type originSet map[string]struct{}

func newOriginSet(list []string) originSet {
	s := originSet{}
	for _, o := range list {
		if n, ok := normalizeOrigin(o); ok {
			s[n] = struct{}{}
		}
	}
	return s
}

func (s originSet) allows(v []byte) bool {
	n, ok := normalizeOrigin(string(v))
	if !ok {
		return false
	}
	_, ok = s[n]
	return ok
}

// loopbackOrigins are the default allowed origins of a server on port.
func loopbackOrigins(scheme string, port int) []string {
	p := strconv.Itoa(port)
	return []string{scheme + "://127.0.0.1:" + p, scheme + "://localhost:" + p, scheme + "://[::1]:" + p}
}

// hostSet is an allow-list of host names (port ignored).
type hostSet map[string]struct{}

func newHostSet(list []string) hostSet {
	s := hostSet{}
	for _, h := range list {
		s[strings.ToLower(strings.Trim(h, "[]"))] = struct{}{}
	}
	return s
}

// allows checks a Host header value ("name", "name:port", "[v6]:port")
// without allocating for lowercase names.
func (s hostSet) allows(v []byte) bool {
	h := v
	var port []byte
	if len(h) > 0 && h[0] == '[' { // [v6] or [v6]:port
		end := bytes.IndexByte(h, ']')
		if end < 0 || (end+1 < len(h) && h[end+1] != ':') {
			return false
		}
		if end+1 < len(h) {
			port = h[end+2:]
		}
		h = h[1:end]
	} else if i := bytes.LastIndexByte(h, ':'); i >= 0 {
		if bytes.IndexByte(h[:i], ':') >= 0 {
			return false // an unbracketed v6 address is not a valid Host
		}
		h, port = h[:i], h[i+1:]
	}
	for _, c := range port { // port = *DIGIT (RFC 9110 §4.2.1)
		if c < '0' || c > '9' {
			return false
		}
	}
	for _, c := range h {
		if c >= 'A' && c <= 'Z' {
			_, ok := s[strings.ToLower(string(h))]
			return ok
		}
	}
	_, ok := s[string(h)]
	return ok
}

// resolveTCP parses "host:port" into an address for bindAddr.
func resolveTCP(addr string) (net.Addr, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, err
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return &net.TCPAddr{IP: ip, Port: p}, nil
}
