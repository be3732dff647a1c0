package main

import "testing"

// TestStartTracing: --trace accepts stdout (not with --stdio, whose
// stdout is the protocol stream), stderr and off; off installs no hook.
func TestStartTracing(t *testing.T) {
	for i, tc := range []struct {
		spec    string
		stdio   bool
		wantErr bool
		hooks   bool
	}{
		{"", false, false, false},
		{"off", true, false, false},
		{"stderr", true, false, true},
		{"stdout", false, false, true},
		{"stdout", true, true, false},
		{"jaeger", false, true, false},
	} {
		h, stop, err := startTracing(tc.spec, tc.stdio)
		if (err != nil) != tc.wantErr {
			t.Errorf("%d: %q stdio=%v: err %v", i, tc.spec, tc.stdio, err)
			continue
		}
		if err != nil {
			continue
		}
		if got := h.CallStart != nil; got != tc.hooks {
			t.Errorf("%d: %q: hooks installed %v, want %v", i, tc.spec, got, tc.hooks)
		}
		stop()
	}
}
