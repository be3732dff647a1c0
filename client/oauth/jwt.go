package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ParsePrivateKey reads a PEM private key (PKCS #8, SEC 1 EC or PKCS #1
// RSA) for Config.PrivateKey.
func ParsePrivateKey(pemData []byte) (crypto.Signer, error) {
	b, _ := pem.Decode(pemData)
	if b == nil {
		return nil, errors.New("oauth: no PEM block in the private key")
	}
	var k any
	var err error
	switch b.Type {
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(b.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: private key: %w", err)
	}
	s, ok := k.(crypto.Signer)
	if !ok || jwtAlg(s) == "" {
		return nil, fmt.Errorf("oauth: private key of type %T is not supported (ECDSA P-256/P-384/P-521 or RSA)", k)
	}
	return s, nil
}

// jwtAlg is the JWS algorithm for a key: ES256/384/512 by curve, RS256.
func jwtAlg(k crypto.Signer) string {
	switch pk := k.Public().(type) {
	case *ecdsa.PublicKey:
		switch pk.Curve {
		case elliptic.P256():
			return "ES256"
		case elliptic.P384():
			return "ES384"
		case elliptic.P521():
			return "ES512"
		}
	case *rsa.PublicKey:
		return "RS256"
	}
	return ""
}

// clientAssertion is the private_key_jwt client authentication (RFC 7523
// §2.2): a short-lived JWT the client signs, issued by and about itself,
// for the authorization server (its issuer as audience).
func clientAssertion(k crypto.Signer, clientID, audience string) (string, error) {
	alg := jwtAlg(k)
	if alg == "" {
		return "", errors.New("oauth: unsupported private key")
	}
	now := time.Now()
	return signJWT(k, map[string]any{"alg": alg, "typ": "JWT"}, map[string]any{
		"iss": clientID, "sub": clientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": randomString(16),
	})
}

// signJWT signs a compact JWS with k (hdr must name jwtAlg(k)).
func signJWT(k crypto.Signer, header, body map[string]any) (string, error) {
	alg := jwtAlg(k)
	hdr, _ := json.Marshal(header)
	claims, _ := json.Marshal(body)
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(hdr) + "." + enc.EncodeToString(claims)
	var h crypto.Hash
	var digest []byte
	switch alg {
	case "ES384":
		d := sha512.Sum384([]byte(input))
		h, digest = crypto.SHA384, d[:]
	case "ES512":
		d := sha512.Sum512([]byte(input))
		h, digest = crypto.SHA512, d[:]
	default:
		d := sha256.Sum256([]byte(input))
		h, digest = crypto.SHA256, d[:]
	}
	var sig []byte
	if ek, ok := k.(*ecdsa.PrivateKey); ok {
		// JWS wants r||s, each the curve's size (RFC 7518 §3.4).
		r, s, err := ecdsa.Sign(rand.Reader, ek, digest)
		if err != nil {
			return "", err
		}
		n := (ek.Curve.Params().BitSize + 7) / 8
		sig = append(pad(r, n), pad(s, n)...)
	} else {
		var err error
		if sig, err = k.Sign(rand.Reader, digest, h); err != nil {
			return "", err
		}
	}
	return input + "." + enc.EncodeToString(sig), nil
}

func pad(x *big.Int, n int) []byte {
	b := make([]byte, n)
	return x.FillBytes(b)
}

// IDJAGAssertion is a Config.Assertion for enterprise-managed
// authorization (SEP-990): it exchanges the user's identity token
// (idToken, an OpenID Connect ID token from the enterprise identity
// provider) at the provider's token endpoint for an Identity Assertion
// JWT Authorization Grant (RFC 8693 token exchange, requested token type
// urn:ietf:params:oauth:token-type:id-jag) aimed at the MCP server's
// authorization server and resource, which GrantJWTBearer then presents.
// clientID is this client at the identity provider ("" for none). Nil hc:
// a 10 s timeout client.
func IDJAGAssertion(hc *http.Client, tokenEndpoint, clientID string, idToken func(context.Context) (string, error)) func(ctx context.Context, issuer, resource string) (string, error) {
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	return func(ctx context.Context, issuer, resource string) (string, error) {
		subject, err := idToken(ctx)
		if err != nil {
			return "", err
		}
		form := url.Values{
			"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"},
			"subject_token":        {subject},
			"subject_token_type":   {"urn:ietf:params:oauth:token-type:id_token"},
			"audience":             {issuer},
			"resource":             {resource},
		}
		if clientID != "" {
			form.Set("client_id", clientID)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenEndpoint, strings.NewReader(form.Encode()))
		if err != nil {
			return "", err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return "", fmt.Errorf("oauth: token exchange: %w", err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(io.LimitReader(resp.Body, metadataMax))
		if err != nil {
			return "", fmt.Errorf("oauth: token exchange: %w", err)
		}
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("oauth: token exchange: HTTP %d: %s", resp.StatusCode, oauthError(raw))
		}
		var r struct {
			AccessToken     string `json:"access_token"`
			IssuedTokenType string `json:"issued_token_type"`
		}
		if err := json.Unmarshal(raw, &r); err != nil || r.AccessToken == "" {
			return "", errors.New("oauth: token exchange: no access_token in the response")
		}
		if r.IssuedTokenType != "urn:ietf:params:oauth:token-type:id-jag" {
			return "", fmt.Errorf("oauth: token exchange issued %q, not an ID-JAG", r.IssuedTokenType)
		}
		return r.AccessToken, nil
	}
}

// dpopProof is a DPoP proof (RFC 9449 §4.2) for a request with method to
// htu (no query or fragment), with the server's nonce and, for a
// resource request, the hash of the access token (ath).
func dpopProof(k *ecdsa.PrivateKey, method, htu, nonce, accessToken string) (string, error) {
	enc := base64.RawURLEncoding
	n := (k.Curve.Params().BitSize + 7) / 8
	jwk := map[string]string{
		"kty": "EC", "crv": k.Curve.Params().Name,
		"x": enc.EncodeToString(pad(k.X, n)), "y": enc.EncodeToString(pad(k.Y, n)),
	}
	claims := map[string]any{"jti": randomString(16), "htm": method, "htu": htu, "iat": time.Now().Unix()}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = enc.EncodeToString(sum[:])
	}
	return signJWT(k, map[string]any{"typ": "dpop+jwt", "alg": jwtAlg(k), "jwk": jwk}, claims)
}
