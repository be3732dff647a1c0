// Package netutil holds the small network helpers the transports share.
package netutil

import (
	"errors"
	"net"
	"net/netip"
	"strings"
)

// IsLoopback reports whether addr ("host:port", or a bare host) names a
// loopback address: localhost, 127.0.0.0/8 or ::1 (SEC-04).
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// CallerIP is what names an anonymous caller whose client address is
// host (an IP in text form) for the per-caller limits: host itself, or ""
// when host is not an IP, or is a loopback one and loopback is false — a
// loopback peer is the operator's own tools or a reverse proxy on the host
// that brings every client from one address, so it names no caller.
func CallerIP(host string, loopback bool) string {
	a, err := netip.ParseAddr(host)
	if err != nil || (!loopback && a.Unmap().IsLoopback()) {
		return ""
	}
	return host
}

// SplitCommand splits a command line the way a POSIX shell splits words:
// blanks separate words, single quotes keep everything, double quotes keep
// everything but \" \\ \$ \`, a backslash outside quotes escapes the next
// character. No expansion of any kind.
func SplitCommand(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
			inWord = true
		case c == '\\':
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

// IsToken reports an RFC 9110 token (1*tchar): a header name, an
// x-mcp-header value.
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Redacted replaces a password in text (RedactURL, RedactArgs).
const Redacted = "xxxxx"

// RedactURL returns s with the password of every URL userinfo in it
// replaced by Redacted: "redis://user:pass@host/0" reads
// "redis://user:xxxxx@host/0", "--state=rediss://:pass@h" reads
// "--state=rediss://:xxxxx@h". A userinfo without a colon is a user name
// and is kept. For logs, errors and a process's shown command line (F10).
func RedactURL(s string) string {
	var out strings.Builder
	for {
		// An authority starts after "//" (after "scheme:" or not: a
		// network-path reference has one too) and ends at the path,
		// query or fragment.
		i := strings.Index(s, "//")
		if i < 0 {
			break
		}
		i += 2
		auth := s[i:]
		if j := strings.IndexAny(auth, "/?#"); j >= 0 {
			auth = auth[:j]
		}
		at := strings.LastIndexByte(auth, '@')
		colon := strings.IndexByte(auth, ':')
		if at < 0 || colon < 0 || colon > at {
			out.WriteString(s[:i])
			s = s[i:]
			continue
		}
		out.WriteString(s[:i+colon+1])
		out.WriteString(Redacted)
		s = s[i+at:]
	}
	if out.Len() == 0 {
		return s
	}
	out.WriteString(s)
	return out.String()
}

// RedactArgs returns a copy of a command line with RedactURL applied to
// each argument.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = RedactURL(a)
	}
	return out
}
