package engine

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/yosida95/uritemplate/v3"
)

// Resource templates beyond RFC 6570 level 1 ({+path}, {#frag}, {/seg},
// {.ext}, {;p}, {?q,lang}, {&more}, prefixes {x:3} and lists {list*}) are
// parsed, matched and expanded with github.com/yosida95/uritemplate/v3, the
// library both official SDKs use, so a URI resolves here as it does there.
//
// The template's regular expression (from the library; RE2, linear in the
// URI) decides whether a URI belongs to the template. For the common shapes
// — each expression one variable, or several under a named operator
// ({?q,lang}), no prefix or explode modifier, no name twice, adjacent
// expressions that cannot run into each other — the values are then read
// from the expression's groups (percent-decoded), a few hundred
// nanoseconds; FuzzTemplateExtract checks that every such match is one the
// library's matcher makes, with the same values. Other templates go to the
// library's matcher, a general NFA that allocates per character (tens of
// microseconds for a short URI, milliseconds for a long one,
// BenchmarkTemplateMatch), so URIs longer than MaxTemplateURI are not
// matched against those templates at all. Level-1 templates keep their own matcher
// (registry.go).
//
// As in the SDKs, a query expression matches its variables in the
// template's order only ({?q,lang} matches ?q=x&lang=y and ?q=x, not
// ?lang=y&q=x), and absent optional variables are absent from vars. A
// variable with several values (a list or an exploded variable) is joined
// with commas. A URI whose decoded values are not valid UTF-8 (%80) does
// not match.

// MaxTemplateURI bounds, in bytes, the URIs matched by the library's
// matcher (templates with prefix or explode modifiers, or whose
// expressions could run into each other); a longer URI matches none of
// them (resources/read then answers "Resource not found" unless another
// template or a resource takes it). The matcher's cost grows faster than
// the URI: at this bound one match takes about 1 to 2 ms for "{/seg*}"
// and up to 6 ms for "{/a*}{/b*}{/c*}" (17 ms at 512 bytes); a long path
// belongs in "{+path}", which has no such bound.
const MaxTemplateURI = 128

// libTemplate is a template beyond level 1.
type libTemplate struct {
	t  *uritemplate.Template
	re *regexp.Regexp
	// exprs, when set, lets the regular expression extract the values
	// itself: no variable has a modifier or appears twice, only the named
	// operators (; ? &) hold more than one, and the library's regexp has
	// one group per expression, in order.
	exprs []libExpr
}

// libExpr is one expression of a template: its operator and variables.
type libExpr struct {
	op    byte // 0 for none
	names []string
}

func parseLibTemplate(s string) (*libTemplate, error) {
	t, err := uritemplate.New(s)
	if err != nil {
		return nil, fmt.Errorf("engine: bad URI template %q: %v", s, err)
	}
	l := &libTemplate{t: t, re: t.Regexp()}
	if ex, ok := simpleExprs(s); ok && len(ex) == l.re.NumSubexp() {
		l.exprs = ex
	}
	return l, nil
}

// named reports whether op writes name=value pairs.
func named(op byte) bool { return op == ';' || op == '?' || op == '&' }

// simpleExprs lists the expressions of s (which the library accepted) when
// extract can read them.
func simpleExprs(s string) ([]libExpr, bool) {
	var ex []libExpr
	seen := map[string]bool{}
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			return ex, true
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return nil, false
		}
		body := s[i+1 : i+j]
		var e libExpr
		if body != "" && strings.IndexByte("+#./;?&", body[0]) >= 0 {
			e.op, body = body[0], body[1:]
		}
		if body == "" || strings.ContainsAny(body, ":*") {
			return nil, false
		}
		e.names = strings.Split(body, ",")
		if len(e.names) > 1 && !named(e.op) {
			return nil, false // "{x,y}": commas separate both items and variables
		}
		for _, n := range e.names {
			if n == "" || seen[n] {
				return nil, false // the library makes a list of a repeated name
			}
			seen[n] = true
		}
		if i == 0 && len(ex) > 0 && !separable(ex[len(ex)-1], e.op) {
			return nil, false
		}
		ex = append(ex, e)
		s = s[i+j+1:]
	}
}

// separable reports whether an expression with operator next can follow
// prev without a literal between them and still be told apart: next must
// start with a character prev cannot hold, neither in a value nor as its
// own separator ("{id}{#frag}", "{?q}{&lang}"; not "{a}{.b}", "{+a}{/b}",
// "{;x}{;y}" or "{?q,lang}{&more}", where the regexp's greedy split and
// the library's may differ).
func separable(prev libExpr, next byte) bool {
	if prev.op == '+' || prev.op == '#' {
		return false // reserved characters allowed: they hold every operator
	}
	if len(prev.names) > 1 && (next == '&' && prev.op != ';' || next == ';' && prev.op == ';') {
		return false
	}
	switch next {
	case '#', '/', ';', '?', '&':
		return next != prev.op
	}
	return false
}

// extract reads the values from the regexp's groups; it gives what the
// library's matcher gives (FuzzTemplateExtract) at a fraction of its cost.
func (l *libTemplate) extract(uri string) (map[string]string, bool) {
	m := l.re.FindStringSubmatchIndex(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(l.exprs))
	for i, e := range l.exprs {
		a, b := m[2*i+2], m[2*i+3]
		if a < 0 {
			continue // an absent optional expression
		}
		g := uri[a:b]
		if !named(e.op) {
			if !setVar(vars, e.names[0], g) {
				return nil, false
			}
			continue
		}
		if g == "" {
			continue // "?" alone: every variable absent
		}
		// name=value pairs, in the template's order, any of them absent;
		// ';' writes a bare name for an empty value, which the library's
		// matcher reports as absent.
		sep := "&"
		if e.op == ';' {
			sep = ";"
		}
		k := 0
		for piece := range strings.SplitSeq(g, sep) {
			found := false
			for ; k < len(e.names); k++ {
				n := e.names[k]
				if e.op == ';' && piece == n {
					found = true
				} else if strings.HasPrefix(piece, n) && len(piece) > len(n) && piece[len(n)] == '=' {
					v := piece[len(n)+1:]
					if strings.IndexByte(v, '=') >= 0 || !setVar(vars, n, v) {
						return nil, false // the regexp allows '=', a value may not
					}
					found = true
				}
				if found {
					k++
					break
				}
			}
			if !found {
				return nil, false
			}
		}
	}
	return vars, true
}

// setVar stores the percent-decoded raw value; it fails when that is not
// UTF-8 text.
func setVar(vars map[string]string, name, raw string) bool {
	v, err := url.PathUnescape(raw)
	if err != nil || !utf8.ValidString(v) {
		return false
	}
	vars[name] = v
	return true
}

func (l *libTemplate) match(uri string) (map[string]string, bool) {
	if l.exprs != nil {
		return l.extract(uri)
	}
	if len(uri) > MaxTemplateURI {
		return nil, false
	}
	return l.libMatch(uri)
}

// libMatch matches with the library's matcher, after the regexp.
func (l *libTemplate) libMatch(uri string) (map[string]string, bool) {
	if !l.re.MatchString(uri) {
		return nil, false
	}
	vals := l.t.Match(uri)
	if vals == nil {
		return nil, false
	}
	vars := make(map[string]string, len(vals))
	for name, v := range vals {
		var s string
		switch v.T {
		case uritemplate.ValueTypeList:
			s = strings.Join(v.List(), ",")
		case uritemplate.ValueTypeKV:
			s = strings.Join(v.KV(), ",")
		default:
			s = v.String()
		}
		if !utf8.ValidString(s) {
			return nil, false // %80 and the like: not text (FuzzTemplateMatch)
		}
		vars[name] = s
	}
	return vars, true
}

// Expand builds a URI from the template and the variables, as RFC 6570
// says (reserved characters percent-encoded unless the operator allows
// them; an absent variable expands to nothing). It works for every
// template level.
func (t ResourceTemplate) Expand(vars map[string]string) (string, error) {
	tpl, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return "", fmt.Errorf("engine: bad URI template %q: %v", t.URITemplate, err)
	}
	vals := make(uritemplate.Values, len(vars))
	for k, v := range vars {
		vals.Set(k, uritemplate.String(v))
	}
	return tpl.Expand(vals)
}
