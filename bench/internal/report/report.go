// Package report holds the table and number helpers the bench commands
// (compare, clientrt) print their results with.
package report

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// PrintGrid prints a table; the first left columns are left-aligned, the
// others right-aligned.
func PrintGrid(head []string, rows [][]string, left int) {
	w := make([]int, len(head))
	for i, h := range head {
		w[i] = runeLen(h)
	}
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], runeLen(c))
		}
	}
	pr := func(cells []string) {
		var b strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", w[i]-runeLen(c))
			if i < left {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
			if i < len(cells)-1 {
				b.WriteString("  ")
			}
		}
		fmt.Println(strings.TrimRight(b.String(), " "))
	}
	pr(head)
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = strings.Repeat("-", w[i])
	}
	pr(sep)
	for _, r := range rows {
		pr(r)
	}
}

func runeLen(s string) int { return len([]rune(s)) }

// Median is the median of the values that are not NaN (NaN when none is).
func Median(xs []float64) float64 {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// FmtNum formats f with prec decimals; NaN (not measured) prints "—".
func FmtNum(f float64, prec int) string {
	if math.IsNaN(f) {
		return "—"
	}
	return strconv.FormatFloat(f, 'f', prec, 64)
}

// LoadAvg is the first three fields of /proc/loadavg.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func MatchAny(name, list string) bool {
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f != "" && strings.Contains(strings.ToLower(name), strings.ToLower(f)) {
			return true
		}
	}
	return false
}

func Slug(s string) string {
	s = strings.ToLower(s)
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, s)
}
