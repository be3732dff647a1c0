package engine

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's run when its tests leave a goroutine behind
// (the engine is the package that starts them: dispatch, hub, timers). No
// ignores: nothing the engine links starts a goroutine of its own.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(labelsFit{m})
}

// labelsFit fails the run when its tests named more transports than
// MaxTransports. The labels are the process's (transportSlot): once they
// are full, a new name counts as "other", so a test reading Load or a
// histogram by its scope's name would pass or fail with the order the
// tests ran in (-shuffle), as TestBatchShutdownWaitsAndCancels and
// TestLoad did before the tests kept to a few names.
type labelsFit struct{ m *testing.M }

func (l labelsFit) Run() int {
	code := l.m.Run()
	t := &transportNames
	t.mu.Lock()
	n, names := t.n, t.names
	t.mu.Unlock()
	if n >= MaxTransports {
		fmt.Fprintf(os.Stderr, "engine tests named %d transports %q, the labels' limit is %d: keep to the usual names\n", n, names[:n], MaxTransports)
		if code == 0 {
			code = 1
		}
	}
	return code
}
