package load

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// FuzzParseHGRM: the .hgrm reader never panics, reads what the writer
// writes, and what it accepts has the shape it promises (rows of finite
// numbers; the three footer lines).
func FuzzParseHGRM(f *testing.F) {
	h := newHist()
	for v := int64(1); v < 5000; v += 7 {
		_ = h.RecordValue(v)
	}
	var b bytes.Buffer
	_ = writeHGRM(&b, h, HGRMScale)
	f.Add(b.Bytes())
	f.Add([]byte("Value Percentile TotalCount 1/(1-Percentile)\n\n1.0 1.0 1\n#[Mean = 1, StdDeviation = 0]\n#[Max = 1, Total count = 1]\n#[Buckets = 1, SubBuckets = 2048]\n"))
	f.Add([]byte(" Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n   10.000     1.000000            1          inf\n"))
	f.Add([]byte("#[Mean = 1, StdDeviation = 0"))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := parseHGRM(bytes.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "load: hgrm: ") {
				t.Fatalf("error without the package prefix: %v", err)
			}
			return
		}
		if !got.haveMean || !got.haveMax || !got.haveBuckets {
			t.Fatal("accepted without the three footer lines")
		}
		if len(got.rows) > bytes.Count(in, []byte("\n"))+1 {
			t.Fatalf("%d rows from %d lines", len(got.rows), bytes.Count(in, []byte("\n"))+1)
		}
		for _, r := range got.rows {
			if math.IsNaN(r.value) || math.IsInf(r.value, 0) || math.IsNaN(r.percentile) || math.IsInf(r.inverse, 0) {
				t.Fatalf("non-finite figure accepted: %+v", r)
			}
		}
	})
}
