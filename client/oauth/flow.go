package oauth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// authorize runs the whole flow for a challenge: discovery, client,
// grant. stepUp: the scopes are the union of the last ones and the
// challenge's (403 insufficient_scope).
func (a *Authorizer) authorize(ctx context.Context, bc bearerChallenge, stepUp bool) error {
	rm, err := a.discoverResource(ctx, bc.resourceMetadata)
	if err != nil {
		return err
	}
	a.resource = rm
	issuer := rm.AuthorizationServers[0]
	as, err := a.server(ctx, issuer)
	if err != nil {
		return err
	}
	scopes := a.selectScopes(bc, rm, as, stepUp)
	cl, err := a.clientFor(ctx, issuer, as)
	if err != nil {
		return err
	}
	a.log.Debug("oauth: authorizing", "issuer", issuer, "client_id", cl.id, "scope", strings.Join(scopes, " "), "grant", a.cfg.Grant)
	var tok *token
	switch a.cfg.Grant {
	case GrantClientCredentials:
		form := url.Values{"grant_type": {"client_credentials"}, "resource": {a.resourceID()}}
		if len(scopes) > 0 {
			form.Set("scope", strings.Join(scopes, " "))
		}
		tok, err = a.tokenRequest(ctx, issuer, as, cl, form, scopes)
	case GrantJWTBearer:
		var assertion string
		if assertion, err = a.cfg.Assertion(ctx, issuer, a.resourceID()); err != nil {
			return fmt.Errorf("oauth: assertion: %w", err)
		}
		form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:jwt-bearer"},
			"assertion": {assertion}, "resource": {a.resourceID()}}
		if len(scopes) > 0 {
			form.Set("scope", strings.Join(scopes, " "))
		}
		tok, err = a.tokenRequest(ctx, issuer, as, cl, form, scopes)
	default:
		tok, err = a.codeFlow(ctx, issuer, as, cl, scopes)
	}
	if err != nil {
		return err
	}
	a.requested = scopes
	a.cur.Store(tok)
	return nil
}

// server returns the metadata of an authorization server, fetched once.
func (a *Authorizer) server(ctx context.Context, issuer string) (*ServerMetadata, error) {
	if md := a.servers[issuer]; md != nil {
		return md, nil
	}
	md, err := a.discoverServer(ctx, issuer)
	if err != nil {
		return nil, err
	}
	a.servers[issuer] = md
	return md, nil
}

// selectScopes applies the MCP scope selection strategy: Config.Scopes;
// else the challenge's scope; else the resource's scopes_supported; else
// none (the parameter is left out). A step-up adds what was asked before
// (SEP-2350). offline_access is added when wanted and supported.
func (a *Authorizer) selectScopes(bc bearerChallenge, rm *ResourceMetadata, as *ServerMetadata, stepUp bool) []string {
	var s []string
	switch {
	case len(a.cfg.Scopes) > 0:
		s = slices.Clone(a.cfg.Scopes)
	case bc.scope != "":
		s = strings.Fields(bc.scope)
	case len(rm.ScopesSupported) > 0:
		s = slices.Clone(rm.ScopesSupported)
	}
	if stepUp {
		prev := a.requested
		if t := a.cur.Load(); t != nil {
			prev = union(prev, t.scopes)
		}
		s = union(prev, s)
	}
	if a.cfg.OfflineAccess && a.cfg.Grant == GrantAuthorizationCode && len(s) > 0 &&
		slices.Contains(as.ScopesSupported, "offline_access") && !slices.Contains(s, "offline_access") {
		s = append(s, "offline_access")
	}
	return s
}

// resourceID is the resource parameter (RFC 8707): the resource
// identifier exactly as the metadata publishes it, else the endpoint.
func (a *Authorizer) resourceID() string {
	if a.resource != nil && a.resource.Resource != "" {
		return a.resource.Resource
	}
	u := *a.endpoint
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	return u.String()
}

// clientFor returns this client's identity at an authorization server:
// the pre-registered one, a Client ID Metadata Document URL, or a new
// dynamic registration. Identities are never carried to another server.
func (a *Authorizer) clientFor(ctx context.Context, issuer string, as *ServerMetadata) (*client, error) {
	if c := a.clients[issuer]; c != nil {
		return c, nil
	}
	var c *client
	switch {
	case a.cfg.ClientID != "" && (a.cfg.Issuer == "" || a.cfg.Issuer == issuer):
		c = &client{id: a.cfg.ClientID, secret: a.cfg.ClientSecret}
		c.method = a.cfg.TokenAuthMethod
		if c.method == "" {
			c.method = pickAuthMethod(c.secret != "", as)
		}
	case a.cfg.ClientMetadataURL != "" && as.ClientIDMetadataDocumentSupported && a.cfg.Grant == GrantAuthorizationCode:
		c = &client{id: a.cfg.ClientMetadataURL, method: "none"}
	case a.cfg.Grant == GrantJWTBearer && a.cfg.ClientID == "":
		c = &client{method: "none"} // the assertion identifies the workload
	case as.RegistrationEndpoint != "":
		var err error
		if c, err = a.register(ctx, as); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("oauth: authorization server %s offers no client registration and no client is pre-registered for it (Config.ClientID)", issuer)
	}
	a.clients[issuer] = c
	return c, nil
}

// pickAuthMethod chooses the token endpoint authentication of a client.
func pickAuthMethod(hasSecret bool, as *ServerMetadata) string {
	if !hasSecret {
		return "none"
	}
	sup := as.TokenEndpointAuthMethodsSupported
	if len(sup) == 0 {
		return "client_secret_basic" // RFC 8414 §2 default
	}
	for _, m := range []string{"client_secret_basic", "client_secret_post"} {
		if slices.Contains(sup, m) {
			return m
		}
	}
	if slices.Contains(sup, "none") {
		return "none"
	}
	return "client_secret_basic"
}

// register performs dynamic client registration (RFC 7591).
func (a *Authorizer) register(ctx context.Context, as *ServerMetadata) (*client, error) {
	method := "none" // a native client keeps no secret unless required
	if sup := as.TokenEndpointAuthMethodsSupported; len(sup) > 0 && !slices.Contains(sup, "none") {
		method = pickAuthMethod(true, as)
	}
	md := map[string]any{
		"client_name":                a.cfg.ClientName,
		"token_endpoint_auth_method": method,
	}
	if a.cfg.Grant == GrantClientCredentials {
		md["grant_types"] = []string{"client_credentials"}
	} else {
		md["grant_types"] = []string{"authorization_code", "refresh_token"}
		md["response_types"] = []string{"code"}
		md["redirect_uris"] = []string{a.cfg.RedirectURL}
		md["application_type"] = applicationType(a.cfg.RedirectURL)
	}
	body, _ := json.Marshal(md)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oauth: client registration: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, metadataMax))
	if err != nil {
		return nil, fmt.Errorf("oauth: client registration: %w", err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("oauth: client registration: HTTP %d: %s", resp.StatusCode, oauthError(raw))
	}
	var r struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		Method       string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.ClientID == "" {
		return nil, fmt.Errorf("oauth: client registration: no client_id in the response")
	}
	c := &client{id: r.ClientID, secret: r.ClientSecret, method: r.Method}
	if c.method == "" {
		c.method = pickAuthMethod(c.secret != "", as)
	}
	a.log.Debug("oauth: registered", "client_id", c.id, "token_endpoint_auth_method", c.method)
	return c, nil
}

// applicationType is the OIDC application_type for a redirect URI: native
// for a loopback or private-use scheme redirect, web otherwise.
func applicationType(redirect string) string {
	u, err := url.Parse(redirect)
	if err != nil {
		return "native"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "native"
	}
	h := u.Hostname()
	if h == "localhost" {
		return "native"
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return "native"
	}
	return "web"
}

// codeFlow runs the authorization code grant with PKCE S256.
func (a *Authorizer) codeFlow(ctx context.Context, issuer string, as *ServerMetadata, cl *client, scopes []string) (*token, error) {
	if as.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("oauth: authorization server %s has no authorization_endpoint", issuer)
	}
	if !slices.Contains(as.CodeChallengeMethodsSupported, "S256") {
		// MCP: without advertised PKCE support the client must refuse.
		return nil, fmt.Errorf("oauth: authorization server %s does not advertise PKCE S256 (code_challenge_methods_supported)", issuer)
	}
	verifier := randomString(32)
	sum := sha256.Sum256([]byte(verifier))
	state := randomString(16)
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {cl.id},
		"redirect_uri":          {a.cfg.RedirectURL},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(sum[:])},
		"code_challenge_method": {"S256"},
		"state":                 {state},
		"resource":              {a.resourceID()},
	}
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	authURL := as.AuthorizationEndpoint
	if strings.Contains(authURL, "?") {
		authURL += "&" + q.Encode()
	} else {
		authURL += "?" + q.Encode()
	}
	cb, err := a.cfg.Authorize(ctx, authURL)
	if err != nil {
		return nil, fmt.Errorf("oauth: authorization: %w", err)
	}
	p := cb.Query()
	// RFC 9207 / SEP-2468: a present iss must be the issuer, exactly; a
	// server that promised it must send it. Checked before anything else
	// of the response is used.
	if p.Has("iss") {
		if got := p.Get("iss"); got != as.Issuer {
			return nil, fmt.Errorf("oauth: authorization response iss %q is not the authorization server %q (mix-up?)", got, as.Issuer)
		}
	} else if as.AuthorizationResponseIssParameterSupported {
		return nil, fmt.Errorf("oauth: authorization response lacks the iss %s promised", as.Issuer)
	}
	if p.Get("state") != state {
		return nil, errors.New("oauth: authorization response state does not match the request")
	}
	if e := p.Get("error"); e != "" {
		return nil, fmt.Errorf("oauth: authorization denied: %s %s", e, p.Get("error_description"))
	}
	code := p.Get("code")
	if code == "" {
		return nil, errors.New("oauth: authorization response has no code")
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {a.cfg.RedirectURL},
		"code_verifier": {verifier},
		"resource":      {a.resourceID()},
	}
	return a.tokenRequest(ctx, issuer, as, cl, form, scopes)
}

// refresh replaces t with a token from its refresh token.
func (a *Authorizer) refresh(ctx context.Context, t *token) error {
	as := a.servers[t.issuer]
	cl := a.clients[t.issuer]
	if as == nil || cl == nil || t.refresh == "" {
		return errors.New("oauth: nothing to refresh with")
	}
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {t.refresh},
		"resource":      {a.resourceID()},
	}
	nt, err := a.tokenRequest(ctx, t.issuer, as, cl, form, t.scopes)
	if err != nil {
		return err
	}
	if nt.refresh == "" {
		nt.refresh = t.refresh
	}
	a.cur.Store(nt)
	return nil
}

// refreshFor refreshes the token a 401 refused, unless the resource now
// names another authorization server (then the flow runs again).
func (a *Authorizer) refreshFor(ctx context.Context, t *token, bc bearerChallenge) error {
	rm, err := a.discoverResource(ctx, bc.resourceMetadata)
	if err != nil {
		return err
	}
	if rm.AuthorizationServers[0] != t.issuer {
		return fmt.Errorf("oauth: the resource moved to authorization server %s", rm.AuthorizationServers[0])
	}
	a.resource = rm
	return a.refresh(ctx, t)
}

// tokenRequest posts a token request with the client's authentication.
func (a *Authorizer) tokenRequest(ctx context.Context, issuer string, as *ServerMetadata, cl *client, form url.Values, scopes []string) (*token, error) {
	switch cl.method {
	case "client_secret_post":
		form.Set("client_id", cl.id)
		form.Set("client_secret", cl.secret)
	case "client_secret_basic":
	case "private_key_jwt":
		assertion, err := clientAssertion(a.cfg.PrivateKey, cl.id, as.Issuer)
		if err != nil {
			return nil, fmt.Errorf("oauth: client assertion: %w", err)
		}
		form.Set("client_id", cl.id)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", assertion)
	default:
		if cl.id != "" {
			form.Set("client_id", cl.id)
		}
	}
	dpop := a.dpopKey != nil && slices.Contains(as.DPoPSigningAlgValuesSupported, "ES256")
	var status int
	var raw []byte
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.TokenEndpoint, strings.NewReader(form.Encode()))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		if cl.method == "client_secret_basic" {
			// RFC 6749 §2.3.1: form-encoded, then Basic.
			req.SetBasicAuth(url.QueryEscape(cl.id), url.QueryEscape(cl.secret))
		}
		if dpop {
			htu, _, _ := strings.Cut(as.TokenEndpoint, "?")
			proof, err := dpopProof(a.dpopKey, http.MethodPost, htu, a.asNonce[issuer], "")
			if err != nil {
				return nil, fmt.Errorf("oauth: DPoP proof: %w", err)
			}
			req.Header.Set("DPoP", proof)
		}
		resp, err := a.hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("oauth: token request: %w", err)
		}
		raw, err = io.ReadAll(io.LimitReader(resp.Body, metadataMax))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("oauth: token request: %w", err)
		}
		status = resp.StatusCode
		// RFC 9449 §8: a nonce to use; once.
		if n := resp.Header.Get("DPoP-Nonce"); dpop && n != "" && status == http.StatusBadRequest &&
			attempt == 0 && strings.HasPrefix(oauthError(raw), "use_dpop_nonce") {
			a.asNonce[issuer] = n
			continue
		}
		if n := resp.Header.Get("DPoP-Nonce"); dpop && n != "" {
			a.asNonce[issuer] = n
		}
		break
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("oauth: token request (%s): HTTP %d: %s", form.Get("grant_type"), status, oauthError(raw))
	}
	var r struct {
		AccessToken  string          `json:"access_token"`
		TokenType    string          `json:"token_type"`
		ExpiresIn    json.RawMessage `json:"expires_in"`
		RefreshToken string          `json:"refresh_token"`
		Scope        string          `json:"scope"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.AccessToken == "" {
		return nil, errors.New("oauth: token response has no access_token")
	}
	scheme := "Bearer"
	switch {
	case strings.EqualFold(r.TokenType, "Bearer"):
	case strings.EqualFold(r.TokenType, "DPoP") && dpop:
		scheme = "DPoP"
	default:
		return nil, fmt.Errorf("oauth: token type %q is not supported", r.TokenType)
	}
	t := &token{header: scheme + " " + r.AccessToken, refresh: r.RefreshToken, issuer: issuer, scopes: scopes}
	if r.Scope != "" {
		t.scopes = strings.Fields(r.Scope)
	}
	if n, err := strconv.ParseFloat(strings.Trim(string(r.ExpiresIn), `"`), 64); err == nil && n > 0 {
		t.expiry = time.Now().Add(time.Duration(n * float64(time.Second)))
	}
	return t, nil
}

// oauthError renders an OAuth error response body.
func oauthError(raw []byte) string {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		if e.Description != "" {
			return e.Error + ": " + e.Description
		}
		return e.Error
	}
	return fmt.Sprintf("%.200q", raw)
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// FollowRedirect is a headless AuthorizeFunc: it GETs the authorization
// URL and returns the redirect the authorization server answers with
// (for authorization servers that approve without a user, such as test
// servers, or a pre-approved session held in hc's cookie jar). Nil hc: a
// 10 s timeout client.
func FollowRedirect(hc *http.Client) AuthorizeFunc {
	return func(ctx context.Context, authURL string) (*url.URL, error) {
		c := http.Client{Timeout: 10 * time.Second}
		if hc != nil {
			c = *hc
		}
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			return nil, fmt.Errorf("authorization endpoint answered HTTP %d without a redirect", resp.StatusCode)
		}
		return resp.Request.URL.Parse(loc)
	}
}

// LoopbackAuthorize is an AuthorizeFunc for a native client (RFC 8252
// §7.3): it listens on redirectURL's loopback address and port (an http
// URL on 127.0.0.1, [::1] or localhost), calls show with the
// authorization URL (to open a browser, or print it), and returns the
// first request to redirectURL's path: the authorization response.
func LoopbackAuthorize(redirectURL string, show func(authURL string)) AuthorizeFunc {
	return func(ctx context.Context, authURL string) (*url.URL, error) {
		ru, err := url.Parse(redirectURL)
		if err != nil || ru.Scheme != "http" || ru.Port() == "" {
			return nil, fmt.Errorf("redirect URL %q: want http://127.0.0.1:PORT/path", redirectURL)
		}
		host := ru.Hostname()
		if host == "localhost" {
			host = "127.0.0.1"
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("redirect URL %q is not on a loopback address", redirectURL)
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(host, ru.Port()))
		if err != nil {
			return nil, err
		}
		got := make(chan *url.URL, 1)
		path := ru.EscapedPath()
		if path == "" {
			path = "/"
		}
		srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.EscapedPath() != path {
				http.NotFound(w, r)
				return
			}
			u := *ru
			u.RawQuery = r.URL.RawQuery
			select {
			case got <- &u:
				fmt.Fprintln(w, "Authorization received; you can close this window.")
			default:
				http.Error(w, "authorization already received", http.StatusConflict)
			}
		})}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		show(authURL)
		select {
		case u := <-got:
			return u, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
