package codec

import "testing"

// BenchmarkScanArgumentsFixture: the same through the members Peek
// recorded (Envelope.ScanArguments), what the engine's flat check calls.
func BenchmarkScanArgumentsFixture(b *testing.B) {
	msg := []byte(fixture)
	var env Envelope
	if err := Peek(msg, &env); err != nil {
		b.Fatal(err)
	}
	names := []string{"text"}
	vals := make([][]byte, 1)
	b.ReportAllocs()
	for b.Loop() {
		if n, err := env.ScanArguments(names, vals); err != nil || n != 1 {
			b.Fatal(n, err)
		}
	}
}
