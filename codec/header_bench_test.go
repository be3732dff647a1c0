package codec

import "testing"

// BenchmarkDecodeHeaderValue: a §2c sentinel value into a stack buffer.
func BenchmarkDecodeHeaderValue(b *testing.B) {
	v := []byte("=?base64?SGVsbG8sIOS4lueVjA==?=")
	var stack [64]byte
	b.ReportAllocs()
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if _, err := DecodeHeaderValue(stack[:0], v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeHeaderValueLiteral: the common plain value (no decoding).
func BenchmarkDecodeHeaderValueLiteral(b *testing.B) {
	v := []byte("us-west1")
	var stack [64]byte
	b.ReportAllocs()
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if _, err := DecodeHeaderValue(stack[:0], v); err != nil {
			b.Fatal(err)
		}
	}
}
