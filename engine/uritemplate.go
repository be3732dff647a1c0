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
// Matching is two steps. The template's regular expression (RE2: linear
// in the URI, no backtracking) decides whether the URI belongs to the
// template at all; only then does the library's matcher extract the
// values (percent-decoded). That matcher is a general NFA that allocates
// per character, a few tens of microseconds for a short URI
// (BenchmarkTemplateMatch), which is why level-1 templates keep their own
// matcher, and why URIs longer than MaxTemplateURI are not matched against
// such a template at all.
//
// As in the SDKs, a query expression matches its variables in the
// template's order only ({?q,lang} matches ?q=x&lang=y and ?q=x, not
// ?lang=y&q=x), and absent optional variables are absent from vars. A
// variable with several values (a list or an exploded variable) is joined
// with commas. A URI whose decoded values are not valid UTF-8 (%80) does
// not match.

// MaxTemplateURI bounds, in bytes, the URIs matched against a template
// beyond level 1; a longer URI matches none of them (resources/read then
// answers "Resource not found" unless a level-1 template or a resource
// takes it).
const MaxTemplateURI = 512

// libTemplate is a template beyond level 1.
type libTemplate struct {
	t  *uritemplate.Template
	re *regexp.Regexp
	// exprs, when set, lets the regular expression extract the values
	// itself: every expression holds one variable without modifier, and
	// the library's regexp has one group per expression, in order.
	exprs []libExpr
}

// libExpr is one expression of a template: its operator and variable.
type libExpr struct {
	op   byte // 0 for none
	name string
}

func parseLibTemplate(s string) (*libTemplate, error) {
	t, err := uritemplate.New(s)
	if err != nil {
		return nil, fmt.Errorf("engine: bad URI template %q: %v", s, err)
	}
	l := &libTemplate{t: t, re: t.Regexp()}
	if ex, ok := singleVarExprs(s); ok && len(ex) == l.re.NumSubexp() {
		l.exprs = ex
	}
	return l, nil
}

// singleVarExprs lists the expressions of s (which the library accepted)
// when each has exactly one variable without prefix or explode modifier.
func singleVarExprs(s string) ([]libExpr, bool) {
	var ex []libExpr
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
		if body == "" || strings.ContainsAny(body, ",:*") {
			return nil, false
		}
		for _, prev := range ex {
			if prev.name == body {
				return nil, false // the library makes a list of a repeated name
			}
		}
		e.name = body
		ex = append(ex, e)
		s = s[i+j+1:]
	}
}

// extract reads the values from the regexp's groups (single-variable
// expressions); it gives what the library's matcher gives
// (FuzzTemplateExtract) at a fraction of its cost.
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
		switch e.op {
		case ';', '?', '&':
			// name=value; ';' also writes a bare name for an empty value,
			// which the library's matcher reports as absent.
			switch {
			case strings.HasPrefix(g, e.name) && len(g) > len(e.name) && g[len(e.name)] == '=':
				g = g[len(e.name)+1:]
				if strings.IndexByte(g, '=') >= 0 {
					return nil, false // the regexp allows it, a value may not
				}
			case g == "" || e.op == ';' && g == e.name:
				continue
			default:
				return nil, false
			}
		}
		v, err := url.PathUnescape(g)
		if err != nil || !utf8.ValidString(v) {
			return nil, false
		}
		vars[e.name] = v
	}
	return vars, true
}

func (l *libTemplate) match(uri string) (map[string]string, bool) {
	if len(uri) > MaxTemplateURI {
		return nil, false
	}
	if l.exprs != nil {
		return l.extract(uri)
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
