package load

import (
	"bytes"
	"strconv"
	"testing"
)

// TestSeqTemplate: a unique-URI touch carries its sequence number in the
// URI and its id where the id goes, and bodyLen matches the bytes.
func TestSeqTemplate(t *testing.T) {
	r := &run{cfg: Config{Workload: WorkloadListen, UniqueURIs: true, URI: "test://load"}}
	if err := r.buildTemplates(); err != nil {
		t.Fatal(err)
	}
	tpl := r.tpls[0]
	body := tpl.appendBodySeq(nil, []byte("42"), []byte("7"))
	if !bytes.Contains(body, []byte(`"arguments":{"uri":"test://load/7"}`)) || !bytes.HasPrefix(body, []byte(`{"jsonrpc":"2.0","id":42,`)) {
		t.Fatalf("body %s", body)
	}
	if len(body) != tpl.bodyLen(2, 1) {
		t.Fatalf("bodyLen %d, body %d bytes", tpl.bodyLen(2, 1), len(body))
	}
	if k, ok := parseSeqURI([]byte(`"test://load/7"`), r.seqPrefix); !ok || k != 7 {
		t.Fatalf("parseSeqURI = %d, %v", k, ok)
	}
}

// FuzzParseSeqURI: parseSeqURI never panics, and what it accepts is the
// prefix, a decimal integer it returns, and the closing quote.
func FuzzParseSeqURI(f *testing.F) {
	prefix := seqURI("test://load")
	for _, s := range []string{`"test://load/0"`, `"test://load/123456"`, `"test://load/"`, `"test://load/-1"`,
		`"test://load/1x"`, `"test://load`, `"other://x/1"`, `"test://load/99999999999999999999"`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		k, ok := parseSeqURI(raw, prefix)
		if !ok {
			return
		}
		if !bytes.HasPrefix(raw, prefix) || raw[len(raw)-1] != '"' {
			t.Fatalf("accepted %q", raw)
		}
		v, err := strconv.ParseInt(string(raw[len(prefix):len(raw)-1]), 10, 64)
		if err != nil || v != k {
			t.Fatalf("%q: got %d, strconv says %d (%v)", raw, k, v, err)
		}
	})
}
