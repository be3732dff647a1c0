package oauth

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's run when a test leaves a goroutine behind
// (an authorization flow's callback listener, a request to one of the test
// authorization servers still running). No ignores are needed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
