package main

import (
	"fmt"
	"math"

	"github.com/mcpwire/mcpwire/bench/internal/report"
)

// cpuAbove is, for row i, the median over rounds of its server CPU per
// request minus its ceiling's in the same round (µs), with the two
// medians beside it and the number of rounds that had both. Rounds where
// either figure is missing are left out.
func cpuAbove(rows []row, results [][]runResult, i int) (above, ours, ceil float64, n int) {
	ci := -1
	for j, r := range rows {
		if r.ceiling && r.group() == rows[i].group() {
			ci = j
		}
	}
	if ci < 0 || ci == i {
		return 0, 0, 0, 0
	}
	var diff, o, c []float64
	for round, res := range results[i] {
		if round >= len(results[ci]) {
			break
		}
		cr := results[ci][round]
		if res.err != nil || res.load == nil || cr.err != nil || cr.load == nil {
			continue
		}
		if !usable(res.cpuReq) || !usable(cr.cpuReq) {
			continue
		}
		diff = append(diff, res.cpuReq-cr.cpuReq)
		o = append(o, res.cpuReq)
		c = append(c, cr.cpuReq)
	}
	if len(diff) == 0 {
		return 0, 0, 0, 0
	}
	return report.Median(diff), report.Median(o), report.Median(c), len(diff)
}

func usable(v float64) bool { return v > 0 && !math.IsNaN(v) && !math.IsInf(v, 0) }

// cpuAboveNotes prints cpuAbove for the line rows (stdio, TCP, Unix),
// whose CPU per message is below a microsecond and so reads as 0.x in
// the table: issue 21 states their budget as server CPU per message above
// the raw echo's, and in lock-step that difference, not the throughput
// ratio, is what the server controls.
func cpuAboveNotes(rows []row, results [][]runResult) {
	any := false
	for i, r := range rows {
		if r.kind == kindHTTP || r.ceiling {
			continue
		}
		above, ours, ceil, n := cpuAbove(rows, results, i)
		if n == 0 {
			continue
		}
		if !any {
			fmt.Println("Server CPU per message above the ceiling's (line rows; each round's difference, median over rounds; µs):")
			any = true
		}
		fmt.Printf("  %-28s %s above  (%s against %s, %d rounds)\n", r.name, report.FmtNum(above, 2), report.FmtNum(ours, 2), report.FmtNum(ceil, 2), n)
	}
	if any {
		fmt.Println()
	}
}
