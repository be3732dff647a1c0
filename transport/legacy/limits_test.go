package legacy_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/transport/legacy"
	"github.com/mcpwire/mcpwire/transport/stdio"
)

// paddedInit is an initialize request of exactly n bytes (a padded
// clientInfo name), so that it can sit either side of a limit.
func paddedInit(t *testing.T, n int) string {
	t.Helper()
	short := strings.Replace(initBody, `"name":"t"`, `"name":""`, 1)
	if n < len(short) {
		t.Fatalf("an initialize cannot be %d bytes", n)
	}
	return strings.Replace(short, `"name":""`, `"name":"`+strings.Repeat("n", n-len(short))+`"`, 1)
}

// TestMaxBodyBytes: Config.MaxBodyBytes bounds a POST: a body at the limit
// is served, one byte more is 413 and counted in TooLarge.
func TestMaxBodyBytes(t *testing.T) {
	leakCheck(t)
	const max = 2000
	rg := startRig(t, newEngine(t), legacy.Config{MaxBodyBytes: max})
	if r := rg.do(t, "POST", legacyPath, "", paddedInit(t, max)); r.status != 200 {
		t.Fatalf("a body at MaxBodyBytes: %d %s", r.status, r.raw)
	}
	if r := rg.do(t, "POST", legacyPath, "", paddedInit(t, max+1)); r.status != 413 {
		t.Fatalf("a body over MaxBodyBytes: %d %s", r.status, r.raw)
	}
	if n := rg.leg.Stats().TooLarge.Load(); n != 1 {
		t.Errorf("TooLarge = %d, want 1", n)
	}
}

// TestMaxLine: Config.MaxLine bounds a line of a stdio connection that
// StdioUpgrade switched to 2025-11-25: a line at the limit is served, one
// byte more ends the connection with ErrLineTooLong, counted in TooLarge.
func TestMaxLine(t *testing.T) {
	leakCheck(t)
	const max = 2000
	for _, tc := range []struct {
		size int
		err  error
	}{{max, nil}, {max + 1, legacy.ErrLineTooLong}} {
		eng := newEngine(t)
		leg := legacy.New(eng, legacy.Config{MaxLine: max})
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			done <- stdio.ServeConn(context.Background(), eng, inR, outW, stdio.Config{MaxLine: max, Upgrade: leg.StdioUpgrade})
			outW.Close()
		}()
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		go func() {
			_, _ = io.WriteString(inW, paddedInit(t, tc.size)+"\n")
			inW.Close()
		}()
		select {
		case err := <-done:
			if !errors.Is(err, tc.err) {
				t.Errorf("a line of %d bytes under MaxLine %d: ServeConn = %v, want %v", tc.size, max, err, tc.err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("ServeConn did not return")
		}
		want := uint64(0)
		if tc.err != nil {
			want = 1
		}
		if n := leg.Stats().TooLarge.Load(); n != want {
			t.Errorf("a line of %d bytes: TooLarge = %d, want %d", tc.size, n, want)
		}
		if n := leg.Stats().Created.Load(); (n == 1) != (tc.err == nil) {
			t.Errorf("a line of %d bytes: %d sessions created", tc.size, n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = leg.Shutdown(ctx)
		_ = eng.Shutdown(ctx)
		cancel()
	}
}
