package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpwire/mcpwire/bench/internal/report"
	"github.com/mcpwire/mcpwire/internal/chart"
)

// tableChart describes how a printed table becomes charts: which columns
// name a row, which holds the ratio to the ceiling, which the throughput.
type tableChart struct {
	file      string // under cfg.outDir
	title     string
	labelCols []int
	ratioCol  int
	rateCol   int
	rateName  string // the throughput's unit ("requests/s")
}

var (
	requestChart = tableChart{file: "compare.html", title: "make compare: requests", labelCols: []int{0, 1, 2, 3},
		ratioCol: 5, rateCol: 4, rateName: "requests/s"}
	fanoutChart = tableChart{file: "compare-fanout.html", title: "make compare-fanout: subscriptions/listen fan-out",
		labelCols: []int{0, 1}, ratioCol: 3, rateCol: 2, rateName: "deliveries/s"}
)

// write renders the table as one self-contained HTML page in outDir: a
// bar per row of its ratio to the ceiling (the ceiling at 1.0), a bar per
// row of its throughput, then the table and the notes. It returns the
// page's path.
func (tc tableChart) write(outDir string, head []string, rows [][]string, notes []string) (string, error) {
	ratios := chart.Bars{Title: "Ratio to the ceiling of the same round (median over rounds)", XLabel: "× ceiling",
		Ref: 1, RefLabel: "ceiling"}
	rates := chart.Bars{Title: "Throughput (median over rounds)", XLabel: tc.rateName}
	for _, r := range rows {
		label := tc.label(r)
		if v, ok := cellNumber(r, tc.ratioCol); ok {
			ratios.Bars = append(ratios.Bars, chart.Bar{Label: label, Value: v})
		}
		if v, ok := cellNumber(r, tc.rateCol); ok {
			rates.Bars = append(rates.Bars, chart.Bar{Label: label, Value: v, Text: chart.FormatNum(v)})
		}
	}
	p := &chart.Page{
		Title:  tc.title,
		Facts:  []chart.Fact{{Name: "load average at the end", Value: report.LoadAvg()}},
		Tables: []chart.Table{{Head: head, Rows: rows}},
		Notes:  notes,
	}
	if len(ratios.Bars) > 0 {
		p.Charts = append(p.Charts, ratios)
	}
	if len(rates.Bars) > 0 {
		p.Charts = append(p.Charts, rates)
	}
	path := filepath.Join(outDir, tc.file)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

func (tc tableChart) label(r []string) string {
	var parts []string
	for _, c := range tc.labelCols {
		// "token" is the standard fixture (said once in the notes); a
		// cell the row's name already says ("mcpwire HTTP 1×1") is not
		// repeated.
		if c < len(r) && r[c] != "" && r[c] != "token" && (len(parts) == 0 || !strings.Contains(parts[0], r[c])) {
			parts = append(parts, r[c])
		}
	}
	return strings.Join(parts, " · ")
}

// cellNumber reads the number a cell starts with ("55582 (1/3 failed)"
// → 55582); "—", "ceiling" and "FAILED" are not numbers.
func cellNumber(r []string, col int) (float64, bool) {
	if col >= len(r) {
		return 0, false
	}
	f := strings.Fields(r[col])
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil && v == v
}

// writeChartNote writes the chart and says where, or why not, on stdout.
func (tc tableChart) writeChartNote(outDir string, head []string, rows [][]string, notes []string) {
	path, err := tc.write(outDir, head, rows, notes)
	if err != nil {
		fmt.Printf("chart not written: %v\n", err)
		return
	}
	fmt.Printf("chart: %s\n", path)
}

// prefixed returns each of xs with p before it.
func prefixed(p string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p + x
	}
	return out
}
