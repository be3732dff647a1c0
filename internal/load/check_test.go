package load

import (
	"strings"
	"testing"
)

// TestResultCheck: a run whose every request failed is an error whatever
// the threshold (before, mcpwire load reported rpc_-32602 for 100 % of
// the requests and exited 0); past the threshold it is one; below it, or
// with nothing measured, it is not.
func TestResultCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		requests int64
		errs     map[string]int64
		share    float64
		want     string // substring of the error; "" for none
	}{
		{"all failed", 100, map[string]int64{"rpc_-32602": 100}, DefaultMaxErrorShare, "every request failed (rpc_-32602=100"},
		{"all failed, threshold off", 10, map[string]int64{"timeout": 4, "rpc_-32603": 6}, 1, "every request failed"},
		{"over the threshold", 100, map[string]int64{"timeout": 51}, DefaultMaxErrorShare, "51.00% of requests failed, over -max-error-share 0.5"},
		{"at the threshold", 100, map[string]int64{"timeout": 50}, DefaultMaxErrorShare, ""},
		{"threshold off", 100, map[string]int64{"timeout": 99}, 1, ""},
		{"a few", 1000, map[string]int64{"timeout": 3}, DefaultMaxErrorShare, ""},
		{"none", 1000, nil, 0, ""},
		{"nothing measured", 0, nil, 0, ""},
	} {
		err := (&Result{Requests: tc.requests, Errors: tc.errs}).Check(tc.share)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want none", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
