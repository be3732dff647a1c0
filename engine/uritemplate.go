package engine

import (
	"fmt"
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
}

func parseLibTemplate(s string) (*libTemplate, error) {
	t, err := uritemplate.New(s)
	if err != nil {
		return nil, fmt.Errorf("engine: bad URI template %q: %v", s, err)
	}
	return &libTemplate{t: t, re: t.Regexp()}, nil
}

func (l *libTemplate) match(uri string) (map[string]string, bool) {
	if len(uri) > MaxTemplateURI || !l.re.MatchString(uri) {
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
