package streamhttp

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"mime"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/valyala/fasthttp"
)

// The hand-written header parsers are checked against independent oracles
// built on the standard library (net/url, net, mime, strconv): whatever they
// accept, the oracle must read the same way. They may be stricter, never
// looser: a disagreement in the other direction is what lets a request past
// a check that a proxy in front reads differently.

// FuzzOrigin: an Origin that normalizeOrigin accepts is an http(s) origin
// that net/url parses to the same scheme, host and port, with nothing else;
// normalizing is idempotent, and the allow-list agrees with normalization.
func FuzzOrigin(f *testing.F) {
	for _, s := range []string{"http://localhost:8080", "HTTPS://Example.COM:443", "http://[::1]:80/", "null",
		"http://a@b", "http://example.com/path", "http://example.com:99999", "http://[fe80::1%25lo]:1", "http://xn--n3h.example",
		"http://example.com:080", "http:///x", "http://a b", "http://%41", "http://example.com:", "https://[::ffff:127.0.0.1]"} {
		f.Add(s)
	}
	set := newOriginSet([]string{"http://localhost:8080", "https://example.com"})
	f.Fuzz(func(t *testing.T, v string) {
		n, ok := normalizeOrigin(v)
		if got := set.allows([]byte(v)); got != (ok && (n == "http://localhost:8080" || n == "https://example.com")) {
			t.Fatalf("allows(%q) = %v, normalized %q %v", v, got, n, ok)
		}
		if !ok {
			return
		}
		if n2, ok2 := normalizeOrigin(n); !ok2 || n2 != n {
			t.Fatalf("not idempotent: %q -> %q -> %q %v", v, n, n2, ok2)
		}
		u, err := url.Parse(strings.TrimSuffix(v, "/"))
		if err != nil {
			t.Fatalf("accepted %q, which net/url refuses: %v", v, err)
		}
		if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") {
			t.Fatalf("accepted %q with more than scheme, host and port: %+v", v, u)
		}
		scheme := strings.ToLower(u.Scheme)
		host, port := strings.ToLower(u.Hostname()), u.Port()
		if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
			port = ""
		}
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		want := scheme + "://" + host
		if port != "" {
			want += ":" + port
		}
		if n != want {
			t.Fatalf("%q normalized to %q, net/url reads %q", v, n, want)
		}
	})
}

// FuzzHost: a Host value the loopback allow-list accepts names one of its
// hosts, with at most a numeric port, as net.SplitHostPort reads it.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"localhost", "localhost:8080", "LOCALHOST:1", "127.0.0.1:80", "[::1]:8080", "[::1]", "::1",
		"evil.com", "localhost.evil.com", "[::1]x", "127.0.0.1:", "localhost:a", "[localhost]:1", ""} {
		f.Add(s)
	}
	set := newHostSet([]string{"localhost", "127.0.0.1", "::1"})
	f.Fuzz(func(t *testing.T, v string) {
		if !set.allows([]byte(v)) {
			return
		}
		host := v
		if h, _, err := net.SplitHostPort(v); err == nil {
			host = h
		} else if strings.HasPrefix(v, "[") || strings.Count(v, ":") > 0 {
			// Only a bracketed v6 literal without a port may fail SplitHostPort.
			if !(strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") && !strings.Contains(v[1:len(v)-1], "]")) {
				t.Fatalf("accepted %q, which net.SplitHostPort cannot read: %v", v, err)
			}
			host = v[1 : len(v)-1]
		}
		switch strings.ToLower(host) {
		case "localhost", "127.0.0.1", "::1":
		default:
			t.Fatalf("accepted %q: host %q is not on the list", v, host)
		}
	})
}

// FuzzAccept: acceptsBoth (fast paths included) agrees with a reading of
// the list by mime.ParseMediaType, item by item; an item the standard
// parser cannot read counts for nothing.
func FuzzAccept(f *testing.F) {
	for _, s := range []string{"application/json, text/event-stream", "text/event-stream,application/json", "*/*",
		"application/*, text/*", "application/json", "text/event-stream;q=0.5, application/json;q=1",
		"APPLICATION/JSON, TEXT/EVENT-STREAM", "application/json ,, text/event-stream", "application/jsonx, text/event-stream",
		" application/json\t,\ttext/event-stream "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := acceptsBoth([]byte(v))
		j, e := false, false
		for _, item := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(item)
			if err != nil {
				mt = strings.ToLower(strings.TrimSpace(strings.SplitN(item, ";", 2)[0]))
				if strings.ContainsAny(mt, " \t") || strings.Count(mt, "/") != 1 {
					continue
				}
			}
			switch mt {
			case "*/*":
				j, e = true, true
			case "application/json", "application/*":
				j = true
			case "text/event-stream", "text/*":
				e = true
			}
		}
		if got && !(j && e) {
			t.Fatalf("acceptsBoth(%q) = true, the standard reading finds json %v, event-stream %v", v, j, e)
		}
	})
}

// FuzzContentType: isJSONType accepts only what mime.ParseMediaType reads
// as application/json (parameters allowed), and accepts every well-formed
// application/json the standard parser reads, with one deliberate
// difference: the type is trimmed of RFC 9110 OWS only (SP and HTAB, §5.6.3),
// where mime trims every Unicode space (strings.TrimSpace). So
// "application/json\f" (the corpus keeps it) is not JSON here, on both front
// ends alike (TestContentTypeOWS).
func FuzzContentType(f *testing.F) {
	for _, s := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON", " application/json ",
		"application/json-patch+json", "text/json", "application/json;", "application/jsonx", "",
		"AppliCAtion/json\f", "\vapplication/json", "application/json\u00a0", "\tapplication/json\t;q=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := isJSONType([]byte(v))
		// The type part as RFC 9110 reads it: up to ';', OWS trimmed.
		typ := strings.ToLower(trimOWSString(strings.SplitN(v, ";", 2)[0]))
		mt, _, err := mime.ParseMediaType(v)
		if got && (err != nil || mt != "application/json") {
			// A value whose parameters the standard parser refuses is still
			// application/json by its type: accept only if the type part is.
			if typ != "application/json" {
				t.Fatalf("isJSONType(%q) = true; mime reads %q, %v", v, mt, err)
			}
		}
		if !got && err == nil && mt == "application/json" && typ == "application/json" {
			t.Fatalf("isJSONType(%q) = false; mime reads application/json and the type part, OWS trimmed, is %q", v, typ)
		}
	})
}

// FuzzAcceptEncoding: pickEncoding names a coding only when the list gives
// it (or "*") a q-value above zero as strconv reads it, and prefers zstd.
// qvalueGrammar is RFC 9110's qvalue, the oracle's own reading of it.
var qvalueGrammar = regexp.MustCompile(`^(0(\.[0-9]{0,3})?|1(\.0{0,3})?)$`)

func FuzzAcceptEncoding(f *testing.F) {
	for _, s := range []string{"gzip", "zstd", "gzip, zstd", "gzip;q=0, zstd", "zstd;q=0.0, gzip;q=0.5", "*", "*;q=0",
		"identity", "GZIP;Q=1", "gzip;q=.", "gzip ; q=0.001", "br, deflate", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := pickEncoding([]byte(v))
		if got != "" && got != "gzip" && got != "zstd" {
			t.Fatalf("pickEncoding(%q) = %q", v, got)
		}
		// q per coding as the oracle reads it: -1 absent, else the value
		// (unparsable values are left out: no claim either way).
		q := map[string]float64{}
		unsure := map[string]bool{}
		for _, item := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(item, ";")
			name = strings.ToLower(strings.Trim(name, " \t"))
			w := 1.0
			if p := strings.Trim(params, " \t"); len(p) >= 2 && (p[0]|0x20) == 'q' && p[1] == '=' {
				raw := strings.Trim(p[2:], " \t")
				f, err := strconv.ParseFloat(raw, 64)
				if err != nil || !qvalueGrammar.MatchString(raw) {
					unsure[name] = true
					continue
				}
				w = f
			}
			if old, ok := q[name]; !ok || w > old {
				q[name] = w
			}
		}
		allowed := func(c string) bool {
			if w, ok := q[c]; ok {
				return w > 0
			}
			w, ok := q["*"]
			return ok && w > 0
		}
		if got != "" && !allowed(got) && !unsure[got] && !unsure["*"] {
			t.Fatalf("pickEncoding(%q) = %q, which the list does not allow (%v)", v, got, q)
		}
		if got == "gzip" && allowed("zstd") && !unsure["zstd"] {
			t.Fatalf("pickEncoding(%q) = gzip although zstd is allowed", v)
		}
	})
}

// FuzzDecodeBody: a request body with Content-Encoding gzip or zstd decodes
// to exactly the bytes that were compressed, under the body limit (413
// past it); corrupt input is 400, never a panic or a silent truncation.
func FuzzDecodeBody(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), false, uint8(0))
	f.Add(bytes.Repeat([]byte("a"), 5000), true, uint8(3))
	f.Add([]byte{}, false, uint8(7))
	s := New(benchEngine(f), Config{MaxBodyBytes: 4096})
	zw, _ := zstd.NewWriter(nil)
	defer zw.Close()
	f.Fuzz(func(t *testing.T, plain []byte, useZstd bool, corrupt uint8) {
		var body []byte
		enc := "gzip"
		if useZstd {
			enc = "zstd"
			body = zw.EncodeAll(plain, nil)
		} else {
			var b bytes.Buffer
			w := gzip.NewWriter(&b)
			_, _ = w.Write(plain)
			_ = w.Close()
			body = b.Bytes()
		}
		if corrupt > 0 && len(body) > 0 {
			body[int(corrupt)%len(body)] ^= 0x5a
		}
		x := s.acquireExchange()
		defer x.unref()
		got, status := s.decodeBody([]byte(enc), body, x)
		switch {
		case status == 0:
			if len(got) > 4096 {
				t.Fatalf("decoded %d bytes past the 4096-byte limit", len(got))
			}
			if corrupt == 0 && !bytes.Equal(got, plain) {
				t.Fatalf("%s round trip: %d bytes in, %d out", enc, len(plain), len(got))
			}
		case status == 413:
			if corrupt == 0 && len(plain) <= 4096 {
				t.Fatalf("413 for %d bytes", len(plain))
			}
		case status == 400:
			if corrupt == 0 {
				t.Fatalf("400 for a well-formed %s body of %d bytes", enc, len(plain))
			}
		default:
			t.Fatalf("status %d", status)
		}
	})
}

// FuzzFramingScan: NetListener's reading of request framing (B5) gives
// the same verdict however the stream is split into reads, never panics,
// and flags only a block that carries both Content-Length and
// Transfer-Encoding lines.
func FuzzFramingScan(f *testing.F) {
	f.Add([]byte("POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}POST /mcp HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), uint16(40))
	f.Add([]byte("GET / HTTP/1.1\n\nPOST / HTTP/1.1\ntransfer-encoding: chunked\ncontent-length: 1\n\n"), uint16(3))
	f.Add([]byte("\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 999999999999999999999\r\n\r\n"), uint16(7))
	f.Fuzz(func(t *testing.T, data []byte, at uint16) {
		var whole framingScan
		k1 := whole.feed(data, 1024)
		var split framingScan
		i := int(at) % (len(data) + 1)
		k2 := split.feed(data[:i], 1024)
		if k2 == 0 {
			k2 = split.feed(data[i:], 1024)
		}
		if k1 != k2 || (k1 == 0 && whole.n != split.n) {
			t.Fatalf("split at %d: verdict %d/%d, blocks %d/%d", i, k1, k2, whole.n, split.n)
		}
		if k1 > 0 {
			low := bytes.ToLower(data)
			if !bytes.Contains(low, []byte("content-length")) || !bytes.Contains(low, []byte("transfer-encoding")) {
				t.Fatalf("flagged block %d without both headers", k1)
			}
		}
	})
}

// FuzzDuplicateHeaders (F2): whatever header block fasthttp accepts, the
// fasthttp handler refuses the request as carrying a duplicate (400,
// Stats.DuplicateHeaders) exactly when an independent count of the
// block's field lines finds two of Origin, Authorization or Content-Type
// (two Host lines never get that far: fasthttp refuses them). The cheap
// pre-filter (fields yielded against raw lines) must never hide one,
// whatever the framing: a Content-Length body, none, or a chunked body
// with trailer fields (which fasthttp adds fields of its own for), over
// HTTP/1.1 or HTTP/1.0.
func FuzzDuplicateHeaders(f *testing.F) {
	for _, s := range []string{
		"Host: 127.0.0.1:8080\r\nContent-Type: application/json\r\ncontent-type: text/plain\r\n",
		"Host: a\r\nOrigin: http://evil.example\r\nOrigin: http://127.0.0.1:8080\r\n",
		"Authorization: Bearer a\r\nAUTHORIZATION: Bearer b\r\n",
		"Connection: close\r\nContent-Type: a\r\nContent-Type: b\r\n",
		"Cookie: a=1\r\nCookie: b=2\r\nContent-Type: a\r\n",
		"X-A: a\r\n Content-Type: folded\r\nContent-Type: b\r\n",
		"Content-Type:\r\nContent-Type: b\r\n",
		"User-Agent: a\r\nUser-Agent: b\r\nHost: a\r\n",
		"Host: a\r\nMcp-Method: tools/call\r\nMcp-Method: tools/list\r\n",
	} {
		for framing := range byte(6) {
			f.Add([]byte(s), framing, []byte("X-A: 1\r\nX-B: 2\r\n"))
		}
	}
	f.Add([]byte("Trailer: X-A\r\nContent-Type: a\r\nContent-Type: b\r\n"), byte(2), []byte("X-A: 1\r\nX-B: 2\r\nX-C: 3\r\n"))
	s := New(benchEngine(f), Config{})
	if err := s.bindAddr(benchAddr); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, block []byte, framing byte, trailer []byte) {
		wire := fuzzWire("/mcp", block, framing, trailer)
		var req fasthttp.Request
		if err := req.Read(bufio.NewReader(bytes.NewReader(wire))); err != nil {
			return
		}
		seen := map[string]int{}
		want := false
		for _, line := range strings.Split(string(req.Header.RawHeaders()), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if line == "" || line[0] == ' ' || line[0] == '\t' {
				continue
			}
			k, _, ok := strings.Cut(line, ":")
			switch k = strings.ToLower(k); {
			case !ok:
			case k == "origin", k == "authorization", k == "content-type":
				seen[k]++
				want = want || seen[k] > 1
			}
		}
		ctx := new(fasthttp.RequestCtx)
		ctx.Init2(nopConn{}, nil, true)
		req.CopyTo(&ctx.Request)
		before := s.stats.DuplicateHeaders.Load()
		s.fastHandler(ctx)
		got := s.stats.DuplicateHeaders.Load() - before
		if want != (got == 1) || (want && ctx.Response.StatusCode() != 400) || got > 1 {
			t.Fatalf("raw block %q: duplicate %v, counted %d, status %d", req.Header.RawHeaders(), want, got, ctx.Response.StatusCode())
		}
	})
}
