package streamhttp

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// decodeBody undoes a request Content-Encoding (gzip or zstd) under the
// body limit (B17): 413 once the decoded size passes MaxBodyBytes, 415 for
// an encoding it does not know, 400 for a corrupt stream.
func (s *Server) decodeBody(enc, body []byte, x *exchange) ([]byte, int) {
	var r io.Reader
	switch {
	case equalFold(trimOWS(enc), "gzip"):
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			s.stats.BadEncoding.Add(1)
			return nil, 400
		}
		defer zr.Close()
		r = zr
	case equalFold(trimOWS(enc), "zstd"):
		zr, err := zstd.NewReader(bytes.NewReader(body), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(s.cfg.MaxBodyBytes)+1<<20))
		if err != nil {
			s.stats.BadEncoding.Add(1)
			return nil, 400
		}
		defer zr.Close()
		r = zr
	default:
		s.stats.BadEncoding.Add(1)
		return nil, 415
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, int64(s.cfg.MaxBodyBytes)+1))
	if n > int64(s.cfg.MaxBodyBytes) {
		s.stats.BodyTooLarge.Add(1)
		return nil, 413
	}
	if err != nil {
		s.stats.BadEncoding.Add(1)
		return nil, 400
	}
	return buf.Bytes(), 0
}

// Reply compression (Config.Compression). JSON replies of at least
// CompressMinBytes are compressed with zstd when the client accepts it,
// else gzip. SSE responses are left uncompressed (C17): every event must
// reach the client when written, so the compressor would be flushed after
// each event, and each open stream would hold its own compressor. Measured
// here (BenchmarkSSEGzipFlush, BenchmarkGzipStreamState): 1.0-1.6 µs of CPU
// per flushed event, more than the whole request path, and about 809 KiB of
// compressor state per stream, so 1,000 listen streams would hold ~800 MiB.
// The wire saving (a repeated 141-byte progress event shrank to 9 bytes)
// does not pay for that on MCP's small, sparse events.

var gzipPool = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

var zstdEnc = sync.OnceValue(func() *zstd.Encoder {
	e, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	return e
})

func (s *Server) compress(enc string, body, dst []byte) []byte {
	if enc == "zstd" {
		return zstdEnc().EncodeAll(body, dst)
	}
	buf := bytes.NewBuffer(dst)
	zw := gzipPool.Get().(*gzip.Writer)
	zw.Reset(buf)
	_, _ = zw.Write(body)
	_ = zw.Close()
	gzipPool.Put(zw)
	return buf.Bytes()
}

// pickEncoding chooses zstd or gzip from Accept-Encoding ("" = identity).
// Codings with q=0 are refused; "*" admits both.
func pickEncoding(ae []byte) string {
	gz, zs := false, false
	for len(ae) > 0 {
		var item []byte
		if i := bytes.IndexByte(ae, ','); i >= 0 {
			item, ae = ae[:i], ae[i+1:]
		} else {
			item, ae = ae, nil
		}
		name, params, _ := bytes.Cut(item, []byte(";"))
		name = trimOWS(name)
		if q := trimOWS(params); len(q) >= 2 && (q[0]|0x20) == 'q' && q[1] == '=' {
			if v := trimOWS(q[2:]); !validQValue(v) || len(bytes.Trim(v, "0.")) == 0 {
				continue // q=0, or a weight that is not a qvalue: not offered
			}
		}
		switch {
		case equalFold(name, "zstd"):
			zs = true
		case equalFold(name, "gzip"):
			gz = true
		case equalFold(name, "*"):
			gz, zs = true, true
		}
	}
	switch {
	case zs:
		return "zstd"
	case gz:
		return "gzip"
	}
	return ""
}

// validQValue reports an RFC 9110 §12.4.2 qvalue: "0" or "1", then
// optionally "." and up to three digits (only zeros after a "1"). Anything
// else ("0E0", "5", "") makes the coding count as not offered, the
// conservative reading.
func validQValue(v []byte) bool {
	if len(v) == 0 || (v[0] != '0' && v[0] != '1') {
		return false
	}
	if len(v) == 1 {
		return true
	}
	if v[1] != '.' || len(v) > 5 {
		return false
	}
	for _, c := range v[2:] {
		if c < '0' || c > '9' || (v[0] == '1' && c != '0') {
			return false
		}
	}
	return true
}
