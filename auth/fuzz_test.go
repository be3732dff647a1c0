package auth

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// FuzzParseHeader: the token pre-parse never panics; what it accepts has
// three segments, an allowed algorithm and no critical extension; a token
// go-jose also parses names an allowed algorithm there too.
func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{
		"eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJ1In0.c2ln",
		"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ1In0.",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln",
		"eyJhbGciOiJSUzI1NiIsImNyaXQiOlsieCJdfQ.e30.c2ln",
		"opaque-token",
		"a.b.c.d.e",
		"..",
	} {
		f.Add(s)
	}
	algs := DefaultAlgorithms
	var jalgs []jose.SignatureAlgorithm
	for _, a := range algs {
		jalgs = append(jalgs, jose.SignatureAlgorithm(a))
	}
	f.Fuzz(func(t *testing.T, tok string) {
		h, err := parseHeader(tok, algs)
		if err != nil {
			if !errors.Is(err, errNotJWT) && !errors.Is(err, errMalformed) {
				t.Fatalf("unexpected error %v", err)
			}
			if errors.Is(err, errNotJWT) && strings.Count(tok, ".") == 2 {
				t.Fatalf("a three-segment token called not a JWT")
			}
			return
		}
		if strings.Count(tok, ".") != 2 || !slices.Contains(algs, h.Alg) || h.Crit != nil {
			t.Fatalf("accepted %q: header %+v", tok, h)
		}
		if jt, err := jwt.ParseSigned(tok, jalgs); err == nil {
			for _, jh := range jt.Headers {
				if !slices.Contains(algs, jh.Algorithm) {
					t.Fatalf("go-jose parsed alg %q", jh.Algorithm)
				}
			}
		}
	})
}

// FuzzServerMetadata: decoding an authorization server's metadata never
// panics, and what it accepts is the issuer's, with a usable jwks_uri.
func FuzzServerMetadata(f *testing.F) {
	f.Add([]byte(`{"issuer":"https://as.example","jwks_uri":"https://as.example/jwks"}`), "https://as.example")
	f.Add([]byte(`{"issuer":"https://as.example","jwks_uri":"http://as.example/jwks"}`), "https://as.example")
	f.Add([]byte(`{"issuer":"https://evil.example","jwks_uri":"https://as.example/jwks"}`), "https://as.example")
	f.Add([]byte(`{"issuer":"http://127.0.0.1:8080","jwks_uri":"http://127.0.0.1:8080/k"}`), "http://127.0.0.1:8080")
	f.Add([]byte(`[]`), "")
	f.Fuzz(func(t *testing.T, b []byte, issuer string) {
		md, err := decodeServerMetadata(b, issuer)
		if err != nil {
			return
		}
		if md.Issuer != issuer || md.JWKSURI == "" || checkURL("jwks_uri", md.JWKSURI) != nil {
			t.Fatalf("accepted %+v for issuer %q", md, issuer)
		}
	})
}

// FuzzJWKS: decoding a key set never panics; every key it keeps is a
// valid public signature key, and encodes and decodes back to the same
// set.
func FuzzJWKS(f *testing.F) {
	f.Add([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","kid":"e1","use":"sig"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"h"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"},{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","use":"enc"}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, err := decodeJWKS(b)
		if err != nil {
			return
		}
		for _, k := range keys {
			if !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
				t.Fatalf("kept %+v", k)
			}
		}
		if len(keys) == 0 {
			return
		}
		enc, err := json.Marshal(jose.JSONWebKeySet{Keys: keys})
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		again, err := decodeJWKS(enc)
		if err != nil || len(again) != len(keys) {
			t.Fatalf("round trip: %d keys, then %d (%v)", len(keys), len(again), err)
		}
	})
}

// FuzzIntrospection: an introspection answer never panics the decoder,
// and aud is read as a string or a list of strings only.
func FuzzIntrospection(f *testing.F) {
	f.Add([]byte(`{"active":true,"aud":"https://mcp.example/mcp","scope":"a b","exp":1}`))
	f.Add([]byte(`{"active":true,"aud":["x","y"]}`))
	f.Add([]byte(`{"active":"true","aud":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeIntrospection(b)
		if err != nil {
			return
		}
		for _, a := range audList(r.Audience) {
			if !json.Valid(r.Audience) {
				t.Fatalf("aud %q from invalid JSON", a)
			}
		}
	})
}
