package load

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestProgressLineWarmupBoundary: the live progress line says warm-up for
// every interval of the warm-up, the one that ends exactly at the start of
// the measurement included, and once measuring counts only measured
// requests (warm-up requests finishing late are left out). Before the fix
// the line at the boundary said run, and the run lines counted warm-up
// requests too.
func TestProgressLineWarmupBoundary(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out syncBuffer
		r := &run{cfg: Config{Progress: &out, ProgressNewline: true}, base: time.Now()}
		r.sched = newSched(r.base, 0, 0, 3*time.Second, 10*time.Second, 0)
		rec := newRecorder()
		r.conns = []*streamConn{{rec: rec}}
		finish := func(n int, measured bool) {
			for range n {
				rec.finish(measured, 0, 1000, outOK, 0, 0)
			}
		}
		stop, done := make(chan struct{}), make(chan struct{})
		go func() { r.progressLine(stop); close(done) }()

		time.Sleep(500 * time.Millisecond)
		finish(100, false)
		time.Sleep(2 * time.Second) // 2.5 s
		finish(100, false)
		time.Sleep(time.Second) // 3.5 s: the measurement started at 3 s
		finish(30, false)       // warm-up requests answered late
		finish(70, true)
		time.Sleep(time.Second) // 4.5 s
		finish(50, true)
		time.Sleep(time.Second) // 5.5 s
		close(stop)
		<-done

		got := strings.Split(strings.TrimSpace(out.String()), "\n")
		want := []string{
			"1.0s warm-up requests 100  rps 100  errors 0",
			"2.0s warm-up requests 100  rps 0  errors 0",
			"3.0s warm-up requests 200  rps 100  errors 0",
			"4.0s run     requests 70  rps 70  errors 0",
			"5.0s run     requests 120  rps 50  errors 0",
		}
		if len(got) != len(want) {
			t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for i := range want {
			if strings.TrimSpace(got[i]) != want[i] {
				t.Errorf("line %d: %q, want %q", i+1, strings.TrimSpace(got[i]), want[i])
			}
		}
	})
}

// TestProgressDue: lines fall on whole seconds from the start, plus one at
// the end of a warm-up that is not a whole number of seconds.
func TestProgressDue(t *testing.T) {
	s := int64(time.Second)
	for i, tc := range []struct {
		t0, mStart int64
		want       []int64
	}{
		{0, 0, []int64{s, 2 * s, 3 * s}},
		{0, 3 * s, []int64{s, 2 * s, 3 * s, 4 * s}},
		{0, 2500 * int64(time.Millisecond), []int64{s, 2 * s, 2500 * int64(time.Millisecond), 3 * s, 4 * s}},
		{7, 7 + s/2, []int64{7 + s/2, 7 + s, 7 + 2*s}},
	} {
		due := tc.t0
		for j, w := range tc.want {
			due = progressDue(due, tc.t0, tc.mStart)
			if due != w {
				t.Errorf("%d: line %d due %d, want %d", i, j+1, due, w)
				break
			}
		}
	}
}
