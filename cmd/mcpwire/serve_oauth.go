package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/mcpwire/mcpwire/auth"
	"github.com/mcpwire/mcpwire/internal/netutil"
)

// oauthFlags are serve's --oauth-* flags: the --http endpoint as an OAuth
// resource server (package auth). Off unless --oauth-issuer or
// --oauth-introspect is given.
type oauthFlags struct {
	issuer, resource, audiences, jwks string
	introspect, clientID, secretFile  string
	scopes                            multiFlag
	leeway                            time.Duration
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// define defines the --oauth-* flags into fs.
func (o *oauthFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&o.issuer, "oauth-issuer", "", "make --http an OAuth resource server: accept JWT access tokens of this authorization server (its metadata names the key set); see docs/auth.md")
	fs.StringVar(&o.resource, "oauth-resource", "", "the endpoint's canonical URL, the resource of its protected resource metadata and the audience tokens must name (default: from --http, --path and --tls-cert)")
	fs.StringVar(&o.audiences, "oauth-audience", "", "comma-separated aud values accepted instead of --oauth-resource")
	fs.StringVar(&o.jwks, "oauth-jwks", "", "the issuer's JWKS URL (default: the jwks_uri of its metadata)")
	fs.Var(&o.scopes, "oauth-scope", "required scopes, comma-separated: SCOPE for every request, TOOL=SCOPE for tools/call of TOOL (403 insufficient_scope without); repeatable")
	fs.StringVar(&o.introspect, "oauth-introspect", "", "check opaque (non-JWT) tokens with this RFC 7662 introspection endpoint")
	fs.StringVar(&o.clientID, "oauth-client-id", "", "this server's client id at --oauth-introspect")
	fs.StringVar(&o.secretFile, "oauth-client-secret-file", "", "file holding this server's client secret at --oauth-introspect (never on the command line)")
	fs.DurationVar(&o.leeway, "oauth-leeway", auth.DefaultLeeway, "clock skew allowed on a token's exp and nbf")
}

// on reports whether --http is an OAuth resource server.
func (o *oauthFlags) on() bool { return o.issuer != "" || o.introspect != "" }

// stray names an --oauth-* flag given without --oauth-issuer or
// --oauth-introspect ("" if none).
func (o *oauthFlags) stray() string {
	for _, f := range []struct{ name, v string }{{"--oauth-resource", o.resource}, {"--oauth-audience", o.audiences},
		{"--oauth-jwks", o.jwks}, {"--oauth-client-id", o.clientID}, {"--oauth-client-secret-file", o.secretFile},
		{"--oauth-scope", strings.Join(o.scopes, ",")}} {
		if f.v != "" {
			return f.name
		}
	}
	return ""
}

// oauthSetup builds the Verifier of the --oauth-* flags into c (nothing
// without them): c.http installs it, the engine gets its Middleware when
// tools have scopes of their own (so that the --legacy-path mount, which
// Authorize does not see, enforces them too), and the admin listener
// exports its counters.
func (f *serveFlags) oauthSetup(c *serveConfig, log *slog.Logger) error {
	o := &f.oauth
	if !o.on() {
		if s := o.stray(); s != "" {
			return fmt.Errorf("serve: %s needs --oauth-issuer (JWTs) or --oauth-introspect (opaque tokens)", s)
		}
		return nil
	}
	switch {
	case c.http == nil:
		return errors.New("serve: --oauth-issuer and --oauth-introspect need --http")
	case f.testAuth:
		return errors.New("serve: --insecure-test-auth and --oauth-* exclude each other")
	}
	cfg := auth.Config{Issuer: o.issuer, JWKSURL: o.jwks, Leeway: o.leeway, Logger: log}
	if cfg.Leeway == 0 {
		cfg.Leeway = -1 // --oauth-leeway 0 means none; the flag's default is auth.DefaultLeeway
	}
	var err error
	if cfg.Resource, err = oauthResource(o.resource, f.httpAddr, f.path, f.tlsCert != ""); err != nil {
		return err
	}
	if o.audiences != "" {
		cfg.Audiences = splitList(o.audiences)
	}
	if cfg.Scopes, cfg.ToolScopes, err = parseScopes(o.scopes); err != nil {
		return err
	}
	if o.introspect != "" {
		if o.clientID == "" || o.secretFile == "" {
			return errors.New("serve: --oauth-introspect needs --oauth-client-id and --oauth-client-secret-file")
		}
		secret, err := readSecretFile(o.secretFile, log)
		if err != nil {
			return fmt.Errorf("serve: --oauth-client-secret-file: %w", err)
		}
		cfg.Introspection = &auth.Introspection{URL: o.introspect, ClientID: o.clientID, ClientSecret: secret}
	} else if o.clientID != "" || o.secretFile != "" {
		return errors.New("serve: --oauth-client-id and --oauth-client-secret-file are the credentials of --oauth-introspect")
	}
	v, err := auth.New(cfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	c.http.oauth = v
	c.admin.oauth = v.Stats()
	if len(cfg.ToolScopes) > 0 {
		c.ref.Middleware = append(c.ref.Middleware, v.Middleware())
	}
	return nil
}

// oauthResource is --oauth-resource, else the --http endpoint's URL when
// the address names the server (a host and a fixed port).
func oauthResource(flagValue, addr, path string, tls bool) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "0" || host == "" || (!netutil.IsLoopback(host) && net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified()) {
		return "", fmt.Errorf("serve: --oauth-resource URL is required: --http %s does not name the server clients reach", addr)
	}
	scheme := "http://"
	if tls {
		scheme = "https://"
	}
	return scheme + net.JoinHostPort(host, port) + path, nil
}

// parseScopes reads --oauth-scope values: comma-separated entries, each
// SCOPE (required of every request) or TOOL=SCOPE (required by tools/call
// of TOOL).
func parseScopes(vals []string) ([]string, map[string][]string, error) {
	var all []string
	var tools map[string][]string
	for _, v := range vals {
		for _, e := range strings.Split(v, ",") {
			e = strings.TrimSpace(e)
			if e == "" {
				continue
			}
			tool, scope, ok := strings.Cut(e, "=")
			if !ok {
				all = append(all, e)
				continue
			}
			if tool == "" || scope == "" {
				return nil, nil, fmt.Errorf("serve: --oauth-scope %q: want SCOPE or TOOL=SCOPE", e)
			}
			if tools == nil {
				tools = map[string][]string{}
			}
			tools[tool] = append(tools[tool], scope)
		}
	}
	return all, tools, nil
}

// readSecretFile reads a secret from its file (its first line, trimmed),
// warning when others than its owner may read it.
func readSecretFile(path string, log *slog.Logger) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		log.Warn("secret file is readable by group or others", "file", path, "mode", fi.Mode().Perm().String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if line = strings.TrimSpace(line); line == "" {
		return "", errors.New("empty")
	}
	return line, nil
}
