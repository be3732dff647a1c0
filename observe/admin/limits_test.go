package admin

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"
)

// TestCheckTimeoutRule: CheckTimeout follows the package's rule: 0 gives a
// check DefaultCheckTimeout, positive that timeout, negative none (the
// check's context has no deadline of its own).
func TestCheckTimeoutRule(t *testing.T) {
	for _, tc := range []struct {
		in, want time.Duration // want 0: no deadline
	}{{0, DefaultCheckTimeout}, {time.Minute, time.Minute}, {-1, 0}} {
		var left time.Duration
		var has bool
		a := New(Config{CheckTimeout: tc.in, Checks: []Check{{Name: "probe", Check: func(ctx context.Context) error {
			var dl time.Time
			dl, has = ctx.Deadline()
			left = time.Until(dl)
			return nil
		}}}})
		rec := httptest.NewRecorder()
		a.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/readyz", nil))
		if rec.Code != 200 {
			t.Fatalf("CheckTimeout %v: /readyz %d", tc.in, rec.Code)
		}
		switch {
		case tc.want == 0 && has:
			t.Errorf("CheckTimeout %v: the check has a deadline %v away", tc.in, left)
		case tc.want != 0 && (!has || left > tc.want || left < tc.want-time.Second):
			t.Errorf("CheckTimeout %v: the check's deadline is %v away (set %v), want about %v", tc.in, left, has, tc.want)
		}
	}
}
