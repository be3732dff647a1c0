package streamhttp

import (
	"bytes"
	"fmt"
	"io"

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
