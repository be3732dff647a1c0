package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// TestDefaultPGOCoversTheTransports reads default.pgo, the CPU profile `go
// build` optimizes this command with (make pgo, profiles/pgo.sh), and
// checks that it holds samples of every transport's request path: a profile
// taken of one transport alone would leave the others built as without one
// and their rows behind. A function named here that was renamed or removed
// fails it: run `make pgo` and name its successor.
func TestDefaultPGOCoversTheTransports(t *testing.T) {
	f, err := os.Open("default.pgo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f) // pprof's format: a gzipped protocol buffer
	if err != nil {
		t.Fatalf("default.pgo is not a pprof profile: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	// The profile's string table holds every sampled function's name
	// verbatim.
	for _, fn := range []string{
		"github.com/mcpwire/mcpwire/transport/streamhttp.(*Server).fastHandler", // HTTP and HTTPS
		"crypto/tls.(*Conn).Write",                           // HTTPS
		"github.com/mcpwire/mcpwire/transport/legacy.",       // the 2025-11-25 endpoint
		"github.com/mcpwire/mcpwire/transport/stdio.",        // stdio
		"github.com/mcpwire/mcpwire/transport/socket.",       // TCP and Unix
		"github.com/mcpwire/mcpwire/transport/linestream.",   // stdio, TCP and Unix
		"github.com/mcpwire/mcpwire/engine.(*Call).complete", // every request
		"github.com/mcpwire/mcpwire/codec.PeekWith",
	} {
		if !bytes.Contains(raw, []byte(fn)) {
			t.Errorf("default.pgo has no sample of %s", fn)
		}
	}
	if testing.Verbose() {
		t.Logf("default.pgo: %d bytes of profile", len(raw))
	}
}
