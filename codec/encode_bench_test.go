package codec

import "testing"

// BenchmarkAppendTextResult: the §2 result object into a reused buffer (0 allocs).
func BenchmarkAppendTextResult(b *testing.B) {
	buf := make([]byte, 0, 1024)
	text := []byte("1 row")
	meta := []byte(serverInfoMeta)
	b.ReportAllocs()
	b.SetBytes(int64(len(AppendTextResult(nil, text, false, meta))))
	for b.Loop() {
		buf = AppendTextResult(buf[:0], text, false, meta)
	}
}

// BenchmarkAppendTextResultLarge: a 64 KiB mostly-ASCII text (SWAR path).
func BenchmarkAppendTextResultLarge(b *testing.B) {
	text := largeMessage()
	buf := make([]byte, 0, 2*len(text))
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		buf = AppendTextResult(buf[:0], text, false, nil)
	}
}

// BenchmarkAppendErrorResponse: the §6 -32022 error with data.
func BenchmarkAppendErrorResponse(b *testing.B) {
	buf := make([]byte, 0, 512)
	id := []byte("8")
	e := &Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: []byte(`{"supported":["2026-07-28"],"requested":"2099-01-01"}`)}
	b.ReportAllocs()
	b.SetBytes(int64(len(vecUnsupportedResp)))
	for b.Loop() {
		buf = AppendErrorResponse(buf[:0], id, e)
	}
}

func BenchmarkAppendProgress(b *testing.B) {
	buf := make([]byte, 0, 512)
	tok := []byte(`"tok-3"`)
	b.ReportAllocs()
	b.SetBytes(int64(len(vecProgress1)))
	for b.Loop() {
		buf = AppendProgress(buf[:0], tok, 0.25, 1, true, "scanning")
	}
}

// BenchmarkAppendMarshal: sonic encoding of a small result into a reused buffer.
func BenchmarkAppendMarshal(b *testing.B) {
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type result struct {
		ResultType string    `json:"resultType"`
		Content    []content `json:"content"`
		IsError    bool      `json:"isError"`
	}
	v := &result{ResultType: "complete", Content: []content{{"text", "1 row"}}}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendMarshal(buf[:0], v); err != nil {
			b.Fatal(err)
		}
	}
}
