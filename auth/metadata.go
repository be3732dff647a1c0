package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

// resourceMetadata is the Protected Resource Metadata this server
// publishes (RFC 9728 §2).
type resourceMetadata struct {
	Resource                     string   `json:"resource"`
	AuthorizationServers         []string `json:"authorization_servers,omitempty"`
	ScopesSupported              []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported       []string `json:"bearer_methods_supported"`
	ResourceName                 string   `json:"resource_name,omitempty"`
	ResourceSigningAlgsSupported []string `json:"resource_signing_alg_values_supported,omitempty"`
	TLSClientCertBound           bool     `json:"tls_client_certificate_bound_access_tokens,omitempty"`
}

// WellKnownPath is the well-known path segment of RFC 9728 §3.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// metadataPaths returns where the metadata of resource u is served: the
// path-suffixed URI of RFC 9728 §3.1 first (the one advertised), and the
// root one for clients that look there.
func metadataPaths(u *url.URL) []string {
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p == "" {
		return []string{WellKnownPath}
	}
	return []string{WellKnownPath + p, WellKnownPath}
}

// metadataHandler serves b, the encoded metadata.
func metadataHandler(b []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		if r.Method == http.MethodGet {
			w.Write(b)
		}
	})
}

// serverMetadata is what the verifier reads of an authorization server's
// metadata (RFC 8414 §2; OpenID Connect Discovery has the same names).
type serverMetadata struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// decodeServerMetadata decodes an authorization server's metadata and
// checks that it is issuer's (RFC 8414 §3.3: exactly equal) and names a
// usable jwks_uri.
func decodeServerMetadata(b []byte, issuer string) (*serverMetadata, error) {
	var md serverMetadata
	if err := json.Unmarshal(b, &md); err != nil {
		return nil, fmt.Errorf("auth: authorization server metadata: %w", err)
	}
	if md.Issuer != issuer {
		return nil, fmt.Errorf("auth: authorization server metadata is for issuer %q, not %q", md.Issuer, issuer)
	}
	if md.JWKSURI == "" {
		return nil, errors.New("auth: authorization server metadata names no jwks_uri")
	}
	if err := checkURL("jwks_uri", md.JWKSURI); err != nil {
		return nil, err
	}
	return &md, nil
}

// serverMetadataURLs lists where issuer's metadata may be: RFC 8414 §3.1
// (the well-known segment inserted before the issuer's path), then
// OpenID Connect Discovery (appended).
func serverMetadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, err
	}
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	root := u.Scheme + "://" + u.Host
	return []string{
		root + "/.well-known/oauth-authorization-server" + p,
		root + p + "/.well-known/openid-configuration",
	}, nil
}

// decodeJWKS decodes a JSON Web Key Set (RFC 7517 §5), keeping the
// public signature keys it can use and skipping the others (an unknown
// key type, an encryption key, a private or symmetric key) so that one
// key the verifier does not understand does not hide the rest.
func decodeJWKS(b []byte) ([]jose.JSONWebKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("auth: key set: %w", err)
	}
	if set.Keys == nil {
		return nil, errors.New("auth: key set has no keys member")
	}
	var out []jose.JSONWebKey
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			continue
		}
		if !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		out = append(out, k)
	}
	return out, nil
}

// checkURL accepts https URLs, and http ones on loopback hosts (tests, a
// sidecar authorization server).
func checkURL(what, s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("auth: %s %q is not an absolute URL", what, s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("auth: %s %q: https is required (http only on loopback)", what, s)
}
