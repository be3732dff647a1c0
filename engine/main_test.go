package engine

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's run when its tests leave a goroutine behind
// (the engine is the package that starts them: dispatch, hub, timers). No
// ignores: nothing the engine links starts a goroutine of its own.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
