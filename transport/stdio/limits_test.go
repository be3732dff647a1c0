package stdio

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpwire/mcpwire/framing"
)

// TestGraceRule: Grace cannot be unlimited; 0 and negative are
// DefaultGrace, positive is that grace.
func TestGraceRule(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{0: DefaultGrace, -time.Second: DefaultGrace, time.Second: time.Second} {
		if got := (Config{Grace: in}).grace(); got != want {
			t.Errorf("Grace %v => %v, want %v", in, got, want)
		}
	}
}

// TestFirstLineMaxLineRule: the first line read for Config.Upgrade obeys
// MaxLine like every other line: negative reads a line of any length
// whole (a negative MaxLine used to be read as the 4 MiB default here), 0
// stops near framing.DefaultMaxLine, positive near that value.
func TestFirstLineMaxLineRule(t *testing.T) {
	long := strings.Repeat("x", framing.DefaultMaxLine+128<<10) + "\n"
	input := long + "next\n"
	for _, tc := range []struct {
		maxLine int
		whole   bool
		atLeast int
		atMost  int
	}{
		{-1, true, len(long), len(long)},
		{0, false, framing.DefaultMaxLine, framing.DefaultMaxLine + 64<<10},
		{1 << 20, false, 1 << 20, 1<<20 + 64<<10},
	} {
		line, rest, err := firstLine(context.Background(), strings.NewReader(input), tc.maxLine)
		if err != nil {
			t.Fatalf("MaxLine %d: %v", tc.maxLine, err)
		}
		if n := len(line); n < tc.atLeast || n > tc.atMost || bytes.HasSuffix(line, []byte("\n")) != tc.whole {
			t.Errorf("MaxLine %d: first line of %d bytes (newline %v), want %d to %d", tc.maxLine, n, bytes.HasSuffix(line, []byte("\n")), tc.atLeast, tc.atMost)
		}
		all, _ := io.ReadAll(rest)
		if string(all) != input {
			t.Errorf("MaxLine %d: the input is not given back whole (%d bytes of %d)", tc.maxLine, len(all), len(input))
		}
	}
}
