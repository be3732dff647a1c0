package oauth

import "strings"

// bearerChallenge is the Bearer (or DPoP, RFC 9449 §7.1) challenge of a
// WWW-Authenticate header (RFC 6750 §3, RFC 9728 §5.1).
type bearerChallenge struct {
	found            bool
	dpop             bool // the DPoP scheme
	error            string
	errorDescription string
	scope            string
	resourceMetadata string
}

// parseBearer finds the Bearer challenge in a WWW-Authenticate value,
// which may hold several challenges (RFC 9110 §11.6.1):
//
//	Bearer error="insufficient_scope", scope="a b", resource_metadata="https://…"
func parseBearer(h string) bearerChallenge {
	var bc bearerChallenge
	p := authParser{s: h}
	inBearer := false
	for !p.done() {
		p.skipSep()
		tok := p.token()
		if tok == "" {
			if !p.done() {
				p.i++ // junk: skip a byte
			}
			continue
		}
		p.skipSpace()
		if p.peek() == '=' {
			// an auth-param of the current challenge
			p.i++
			p.skipSpace()
			var v string
			if p.peek() == '"' {
				v = p.quoted()
			} else {
				v = p.token()
			}
			if inBearer {
				switch strings.ToLower(tok) {
				case "error":
					bc.error = v
				case "error_description":
					bc.errorDescription = v
				case "scope":
					bc.scope = v
				case "resource_metadata":
					bc.resourceMetadata = v
				}
			}
			continue
		}
		// a new challenge: its scheme
		if inBearer {
			break
		}
		if bc.found {
			break // the first Bearer or DPoP challenge only
		}
		inBearer = strings.EqualFold(tok, "Bearer") || strings.EqualFold(tok, "DPoP")
		bc.found = inBearer
		bc.dpop = inBearer && strings.EqualFold(tok, "DPoP")
		// token68 (Bearer does not use it): skip up to a comma
		if inBearer {
			continue
		}
	}
	return bc
}

type authParser struct {
	s string
	i int
}

func (p *authParser) done() bool { return p.i >= len(p.s) }

func (p *authParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *authParser) skipSpace() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *authParser) skipSep() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

// token reads an RFC 9110 token (token68 characters too).
func (p *authParser) token() string {
	start := p.i
	for !p.done() {
		c := p.s[p.i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\",;=\\()<>@:?[]{}", c) >= 0 {
			if c == '=' && p.i > start && p.i+1 < len(p.s) && (p.s[p.i+1] == '=' || p.s[p.i+1] == ',') {
				p.i++ // token68 padding
				continue
			}
			break
		}
		p.i++
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string, unescaping quoted-pairs.
func (p *authParser) quoted() string {
	p.i++ // opening quote
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch c {
		case '"':
			return b.String()
		case '\\':
			if !p.done() {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
