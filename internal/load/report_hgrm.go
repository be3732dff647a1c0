package load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HdrHistogram's percentile distribution text (".hgrm"), as its reference
// implementation prints it (outputPercentileDistribution) and as wrk2 and
// the HdrHistogram plotter read it:
//
//	       Value     Percentile TotalCount 1/(1-Percentile)
//
//	       0.052 0.000000000000          1           1.00
//	       ...
//	      12.345 1.000000000000      10000
//	#[Mean    =        0.123, StdDeviation   =        0.045]
//	#[Max     =       12.345, Total count    =        10000]
//	#[Buckets =           16, SubBuckets     =         2048]
//
// Value is the highest value equivalent to the percentile's (the
// histogram's resolution), scaled; TotalCount is cumulative; the last line
// (percentile 1) has no 1/(1-Percentile) column. Percentiles step by
// hgrmTicks per halving of the distance to 100%, like the reference's
// default.
const (
	hgrmTicks = 5
	// HGRMScale is the unit of the values written by WriteHGRM: the
	// histogram records µs, the file says milliseconds (as wrk2's does, so
	// both plot on one chart).
	HGRMScale = 1000
)

// WriteHGRM writes the measured request latencies in HdrHistogram's
// percentile text form, values in milliseconds.
func (r *Result) WriteHGRM(w io.Writer) error { return writeHGRM(w, r.hist, HGRMScale) }

// WriteDeliveryHGRM is WriteHGRM for the listen workload's delivery
// latencies.
func (r *Result) WriteDeliveryHGRM(w io.Writer) error { return writeHGRM(w, r.dhist, HGRMScale) }

func writeHGRM(w io.Writer, h *hdrhistogram.Histogram, scale float64) error {
	if h == nil {
		h = newHist()
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")
	d := int(h.SignificantFigures())
	if h.TotalCount() > 0 {
		for _, b := range h.CumulativeDistributionWithTicks(hgrmTicks) {
			p := b.Quantile / 100
			v := float64(b.ValueAt) / scale
			if p >= 1 {
				fmt.Fprintf(bw, "%12.*f %2.12f %10d\n", d, v, 1.0, b.Count)
			} else {
				fmt.Fprintf(bw, "%12.*f %2.12f %10d %14.2f\n", d, v, p, b.Count, 1/(1-p))
			}
		}
	}
	buckets, sub := hdrLayout(h)
	fmt.Fprintf(bw, "#[Mean    = %12.*f, StdDeviation   = %12.*f]\n", d, h.Mean()/scale, d, h.StdDev()/scale)
	fmt.Fprintf(bw, "#[Max     = %12.*f, Total count    = %12d]\n", d, float64(h.Max())/scale, h.TotalCount())
	fmt.Fprintf(bw, "#[Buckets = %12d, SubBuckets     = %12d]\n", buckets, sub)
	return bw.Flush()
}

// hdrLayout is the histogram's bucket and sub-bucket counts (the library
// keeps them private): the same arithmetic as its constructor.
func hdrLayout(h *hdrhistogram.Histogram) (buckets, sub int64) {
	single := 2 * math.Pow10(int(h.SignificantFigures()))
	sub = 1 << int64(math.Ceil(math.Log2(single)))
	unit := int64(math.Floor(math.Log2(float64(h.LowestTrackableValue()))))
	untrackable := sub << unit
	buckets = 1
	for untrackable <= h.HighestTrackableValue() {
		if untrackable > math.MaxInt64/2 {
			buckets++
			break
		}
		untrackable <<= 1
		buckets++
	}
	return buckets, sub
}

// hgrm is a parsed percentile distribution.
type hgrm struct {
	rows                           []hgrmRow
	mean, stddev, max              float64
	total, buckets, subBuckets     int64
	haveMean, haveMax, haveBuckets bool
}

type hgrmRow struct {
	value, percentile float64
	count             int64
	inverse           float64 // NaN on the last line
}

const hgrmMaxLine = 4096

var errHGRMHeader = errors.New("load: hgrm: first line is not the Value/Percentile/TotalCount/1/(1-Percentile) header")

// parseHGRM reads HdrHistogram's percentile distribution text. It checks
// the shape of each line (the header, rows of 3 or 4 numbers, the three
// footer lines), not the figures' consistency.
func parseHGRM(rd io.Reader) (*hgrm, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 256), hgrmMaxLine)
	out := &hgrm{}
	n := 0
	header := false
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			continue
		case !header:
			if strings.Join(strings.Fields(line), " ") != "Value Percentile TotalCount 1/(1-Percentile)" {
				return nil, errHGRMHeader
			}
			header = true
		case strings.HasPrefix(line, "#["):
			if err := out.footer(line); err != nil {
				return nil, fmt.Errorf("load: hgrm: line %d: %w", n, err)
			}
		default:
			row, err := parseHGRMRow(line)
			if err != nil {
				return nil, fmt.Errorf("load: hgrm: line %d: %w", n, err)
			}
			out.rows = append(out.rows, row)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("load: hgrm: %w", err)
	}
	if !header {
		return nil, errHGRMHeader
	}
	if !out.haveMean || !out.haveMax || !out.haveBuckets {
		return nil, errors.New("load: hgrm: footer incomplete (want #[Mean …], #[Max …] and #[Buckets …])")
	}
	return out, nil
}

func parseHGRMRow(line string) (hgrmRow, error) {
	f := strings.Fields(line)
	if len(f) != 3 && len(f) != 4 {
		return hgrmRow{}, fmt.Errorf("%d fields, want 3 or 4", len(f))
	}
	var r hgrmRow
	var err error
	if r.value, err = parseFinite(f[0]); err != nil {
		return r, err
	}
	if r.percentile, err = parseFinite(f[1]); err != nil {
		return r, err
	}
	if r.count, err = strconv.ParseInt(f[2], 10, 64); err != nil {
		return r, fmt.Errorf("count %q: not an integer", hgrmSnippet(f[2]))
	}
	r.inverse = math.NaN()
	if len(f) == 4 {
		if r.inverse, err = parseFinite(f[3]); err != nil {
			return r, err
		}
	}
	return r, nil
}

// footer parses "#[Name = v, Name = v]".
func (h *hgrm) footer(line string) error {
	body, ok := strings.CutSuffix(strings.TrimPrefix(line, "#["), "]")
	if !ok {
		return fmt.Errorf("footer %q: no closing ]", hgrmSnippet(line))
	}
	a, b, ok := strings.Cut(body, ",")
	if !ok {
		return fmt.Errorf("footer %q: want two name = value pairs", hgrmSnippet(line))
	}
	k1, v1, ok1 := strings.Cut(a, "=")
	k2, v2, ok2 := strings.Cut(b, "=")
	if !ok1 || !ok2 {
		return fmt.Errorf("footer %q: want name = value", hgrmSnippet(line))
	}
	k1, k2 = strings.TrimSpace(k1), strings.TrimSpace(k2)
	v1, v2 = strings.TrimSpace(v1), strings.TrimSpace(v2)
	var err1, err2 error
	switch {
	case k1 == "Mean" && k2 == "StdDeviation":
		h.mean, err1 = parseFinite(v1)
		h.stddev, err2 = parseFinite(v2)
		h.haveMean = true
	case k1 == "Max" && k2 == "Total count":
		h.max, err1 = parseFinite(v1)
		h.total, err2 = strconv.ParseInt(v2, 10, 64)
		h.haveMax = true
	case k1 == "Buckets" && k2 == "SubBuckets":
		h.buckets, err1 = strconv.ParseInt(v1, 10, 64)
		h.subBuckets, err2 = strconv.ParseInt(v2, 10, 64)
		h.haveBuckets = true
	default:
		return fmt.Errorf("footer %q: unknown names", hgrmSnippet(line))
	}
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("footer %q: %v", hgrmSnippet(line), err)
	}
	return nil
}

func parseFinite(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%q: not a finite number", hgrmSnippet(s))
	}
	return f, nil
}

// hgrmSnippet is s cut to 40 bytes for an error message.
func hgrmSnippet(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
