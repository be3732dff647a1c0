package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// metadataMax bounds a metadata document or token response.
const metadataMax = 1 << 20

// ResourceMetadata is OAuth 2.0 Protected Resource Metadata (RFC 9728)
// as far as MCP uses it.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
}

// ServerMetadata is OAuth 2.0 Authorization Server Metadata (RFC 8414;
// OpenID Connect Discovery documents carry the same fields).
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	ResponseTypesSupported            []string `json:"response_types_supported,omitempty"`
	GrantTypesSupported               []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	// ClientIDMetadataDocumentSupported: the server accepts an HTTPS URL
	// naming a Client ID Metadata Document as client_id.
	ClientIDMetadataDocumentSupported bool `json:"client_id_metadata_document_supported,omitempty"`
	// AuthorizationResponseIssParameterSupported (RFC 9207): the
	// authorization response carries iss.
	AuthorizationResponseIssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
	// DPoPSigningAlgValuesSupported (RFC 9449 §5.1): the server issues
	// DPoP-bound tokens for proofs signed with these.
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// errNotFound: a metadata URL answered 404 (or another 4xx): try the next.
var errNotFound = errors.New("oauth: metadata not found")

// getJSON fetches a JSON document with GET.
func (a *Authorizer) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, metadataMax))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return fmt.Errorf("%w: GET %s: HTTP %d", errNotFound, u, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("oauth: GET %s: HTTP %d", u, resp.StatusCode)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("oauth: GET %s: %w", u, err)
	}
	return nil
}

// resourceMetadataURLs lists where the Protected Resource Metadata of
// the MCP endpoint may be (RFC 9728 §3.1): the URL the challenge named;
// else the path-aware well-known URI, then the one at the root.
func resourceMetadataURLs(endpoint *url.URL, fromChallenge string) []string {
	if fromChallenge != "" {
		return []string{fromChallenge}
	}
	root := &url.URL{Scheme: endpoint.Scheme, Host: endpoint.Host}
	var out []string
	if p := strings.TrimSuffix(endpoint.EscapedPath(), "/"); p != "" {
		out = append(out, root.String()+"/.well-known/oauth-protected-resource"+p)
	}
	return append(out, root.String()+"/.well-known/oauth-protected-resource")
}

// discoverResource fetches the Protected Resource Metadata and checks
// that it describes the endpoint.
func (a *Authorizer) discoverResource(ctx context.Context, fromChallenge string) (*ResourceMetadata, error) {
	var errs []error
	for _, u := range resourceMetadataURLs(a.endpoint, fromChallenge) {
		var md ResourceMetadata
		if err := a.getJSON(ctx, u, &md); err != nil {
			errs = append(errs, err)
			if errors.Is(err, errNotFound) {
				continue
			}
			return nil, err
		}
		if len(md.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("oauth: protected resource metadata %s names no authorization server", u)
		}
		if md.Resource != "" && !resourceCovers(md.Resource, a.endpoint) {
			// RFC 9728 §3.3 / MCP: the metadata must be for this server.
			return nil, fmt.Errorf("oauth: protected resource metadata %s is for %q, not %s", u, md.Resource, a.endpoint)
		}
		return &md, nil
	}
	return nil, fmt.Errorf("oauth: no protected resource metadata: %w", errors.Join(errs...))
}

// resourceCovers reports whether the resource identifier res names the
// endpoint: same scheme and authority, and a path that is the endpoint's
// or one of its ancestors (a server may publish its origin as resource).
func resourceCovers(res string, endpoint *url.URL) bool {
	r, err := url.Parse(res)
	if err != nil || r.Fragment != "" {
		return false
	}
	if !strings.EqualFold(r.Scheme, endpoint.Scheme) || !strings.EqualFold(hostPort(r), hostPort(endpoint)) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	ep := strings.TrimSuffix(endpoint.EscapedPath(), "/")
	return rp == "" || rp == ep || strings.HasPrefix(ep, rp+"/")
}

// hostPort is u's host with the scheme's default port made explicit.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return u.Host + ":443"
	case "http":
		return u.Host + ":80"
	}
	return u.Host
}

// serverMetadataURLs lists where the metadata of the authorization server
// with this issuer may be, in the order MCP gives (RFC 8414 §3.1 and
// OpenID Connect Discovery, path-aware for an issuer with a path).
func serverMetadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("oauth: bad authorization server issuer %q", issuer)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("oauth: authorization server issuer %q has a query or fragment", issuer)
	}
	root := (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p == "" {
		return []string{
			root + "/.well-known/oauth-authorization-server",
			root + "/.well-known/openid-configuration",
		}, nil
	}
	return []string{
		root + "/.well-known/oauth-authorization-server" + p,
		root + "/.well-known/openid-configuration" + p,
		root + p + "/.well-known/openid-configuration",
	}, nil
}

// discoverServer fetches the metadata of the authorization server issuer
// and checks its issuer (RFC 8414 §3.3: identical to the one the
// well-known URL was built from; no normalization).
func (a *Authorizer) discoverServer(ctx context.Context, issuer string) (*ServerMetadata, error) {
	urls, err := serverMetadataURLs(issuer)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, u := range urls {
		var md ServerMetadata
		if err := a.getJSON(ctx, u, &md); err != nil {
			errs = append(errs, err)
			if errors.Is(err, errNotFound) {
				continue
			}
			return nil, err
		}
		if md.Issuer != issuer {
			return nil, fmt.Errorf("oauth: authorization server metadata %s has issuer %q, want %q", u, md.Issuer, issuer)
		}
		if md.TokenEndpoint == "" {
			return nil, fmt.Errorf("oauth: authorization server metadata %s has no token_endpoint", u)
		}
		return &md, nil
	}
	return nil, fmt.Errorf("oauth: no authorization server metadata for %s: %w", issuer, errors.Join(errs...))
}
