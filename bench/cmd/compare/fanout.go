package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpwire/mcpwire/bench/internal/report"
)

// fanRow is one server of the fan-out section.
type fanRow struct {
	name    string
	ceiling bool
	server  []string
	// unsupported, when set, is why the row cannot run; it is printed in
	// the table instead of numbers.
	unsupported string
	// note is printed under the table.
	note string
	// unique: each touch names its own URI under the subscribed one
	// (mcpwire load -unique-uris), so nothing may collapse; a row is
	// compared with the ceiling of its own kind, and any lost delivery
	// fails it.
	unique bool
}

func fanoutRows(cfg config) []fanRow {
	b := func(name string) string { return filepath.Join(cfg.bin, name) }
	rows := baseFanRows(cfg.base, []fanRow{
		{name: "mcpwire HTTP", server: []string{b("mcpwire"), "serve", "--http", "ADDR", "--log-level", "error",
			"--max-conns-per-ip", "100000", "--max-conns", "100000"}},
		{name: "go-sdk HTTP", server: []string{b("bench-gosdk"), "-http", "ADDR"}},
		{name: "mcp-go HTTP", server: []string{b("bench-mcpgo"), "-http", "ADDR"},
			note: "mcp-go HTTP: v1.2.1 has no call that fans notifications/resources/updated out to stateless listen streams; its touch uses a registry built from public API (listen hooks + each session's NotificationChannel), see servers/mcpgo"},
		{name: "raw SSE", ceiling: true, server: []string{b("bench-rawsse"), "-addr", "ADDR"}},
		{name: "mcpwire HTTP, URI per touch", unique: true, server: []string{b("mcpwire"), "serve", "--http", "ADDR", "--log-level", "error",
			"--max-conns-per-ip", "100000", "--max-conns", "100000"}},
		{name: "raw SSE, URI per touch", ceiling: true, unique: true, server: []string{b("bench-rawsse"), "-addr", "ADDR"}},
	})
	return rows
}

// baseFanRows adds, with -base, each mcpwire row again with the base binary
// as "mcpwire@base …", in the same rounds.
func baseFanRows(base string, rows []fanRow) []fanRow {
	if base == "" {
		return rows
	}
	var out []fanRow
	for _, r := range rows {
		out = append(out, r)
		if strings.HasPrefix(r.name, "mcpwire ") {
			b := r
			b.name = "mcpwire@base " + strings.TrimPrefix(r.name, "mcpwire ")
			b.server = append([]string{base}, r.server[1:]...)
			out = append(out, b)
		}
	}
	return out
}

// selectFanRows keeps, when only is set, the rows whose name matches it and
// the ceilings of their kind.
func selectFanRows(rows []fanRow, only string) []fanRow {
	if only == "" {
		return rows
	}
	kinds := map[bool]bool{}
	for _, r := range rows {
		if report.MatchAny(r.name, only) {
			kinds[r.unique] = true
		}
	}
	var out []fanRow
	for _, r := range rows {
		if report.MatchAny(r.name, only) || r.ceiling && kinds[r.unique] {
			out = append(out, r)
		}
	}
	return out
}

type fanResult struct {
	err          error
	deliveries   float64 // per second
	p50, p99     float64 // delivery latency, µs
	rssPerStream float64 // KiB per open stream
	cpuPerDeliv  float64 // server CPU µs per delivery
	genCPU       float64 // generator CPU µs per delivery
	arrived      float64 // deliveries / (measured publishes × streams)
	note         string
}

func listenArgs(cfg config, n int, unique bool) []string {
	a := []string{"-workload", "listen", "-listeners", fmt.Sprint(n), "-uri", "test://load",
		"-publish-rate", fmt.Sprint(cfg.pubRate), "-d", cfg.duration.String(), "-warmup", cfg.warmup.String(), "-json"}
	if unique {
		a = append(a, "-unique-uris")
	}
	return a
}

func runFanRow(cfg config, r fanRow, idx, n, round int) fanResult {
	var res fanResult
	tag := fmt.Sprintf("fanout-n%d-r%d-%s", n, round, report.Slug(r.name))
	addr := fmt.Sprintf("127.0.0.1:%d", cfg.basePort+idx)
	if !portFree(addr) {
		res.err = fmt.Errorf("port %s is busy", addr)
		return res
	}
	srv, err := startServer(r.server, "tcp", addr, filepath.Join(cfg.outDir, tag+".stderr"))
	if err != nil {
		res.err = err
		return res
	}
	defer srv.stop()
	time.Sleep(200 * time.Millisecond)
	idle, err := srv.src.sample()
	if err != nil {
		res.err = err
		return res
	}
	baseFDs := countFDs(srv.src.pid)
	var w window
	var open stats
	var openErr error
	load, _, err := runGenerator(cfg, append(listenArgs(cfg, n, r.unique), "http://"+addr+"/mcp"),
		filepath.Join(cfg.outDir, tag+".json"),
		func(gpid int, _ time.Time) {
			// The generator opens every stream and waits for the
			// acknowledgements before its warm-up starts; the server holds
			// one descriptor per open stream, so its descriptor count tells
			// when they are all there.
			deadline := time.Now().Add(cfg.warmup + 60*time.Second)
			for countFDs(srv.src.pid) < baseFDs+n {
				if time.Now().After(deadline) || !alive(gpid) {
					openErr = fmt.Errorf("the server never held %d stream connections", n)
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
			tOpen := time.Now()
			if open, openErr = srv.src.sample(); openErr != nil {
				return
			}
			w = sampleWindow(cfg, func() *statSource { return srv.src }, tOpen)
		})
	if err != nil && (load == nil || !r.unique) {
		res.err = err
		return res
	}
	// A unique-URI run that lost deliveries exits non-zero after its
	// report: the loss is named below, any other failure stays err.
	genErr := err
	res.deliveries = firstNum(load.raw, "deliveries_per_s")
	res.arrived = nan
	if d := firstNum(load.raw, "deliveries"); load.Requests > 0 && !isNaN(d) {
		res.arrived = d / (load.Requests * float64(n))
	}
	if r.unique {
		// Nothing may collapse: a publish that missed a stream, or reached
		// one twice, fails the row.
		loss, ok := load.raw["loss"].(map[string]any)
		lost, dup := num(loss["lost"]), num(loss["duplicates"])
		switch {
		case !ok || isNaN(lost) || isNaN(dup):
			res.err = fmt.Errorf("the generator reported no loss count")
		case lost > 0:
			res.err = fmt.Errorf("%.0f deliveries lost on %.0f streams", lost, num(loss["streams"]))
		case dup > 0:
			res.err = fmt.Errorf("%.0f duplicate deliveries", dup)
		}
	}
	if res.err == nil && genErr != nil {
		res.err = genErr
	}
	lat := firstMap(load.raw, "delivery_latency_us")
	res.p50, res.p99 = num(lat["p50"]), num(lat["p99"])
	// The generator's CPU per delivery, or derived from its CPU per
	// publish request.
	res.genCPU = firstNum(load.raw, "client_cpu_us_per_delivery")
	if v := firstNum(load.raw, "client_cpu_us_per_req"); isNaN(res.genCPU) && !isNaN(v) && res.deliveries > 0 {
		if rps := firstNum(load.raw, "rps"); rps > 0 {
			res.genCPU = v * rps / res.deliveries
		}
	}
	res.rssPerStream, res.cpuPerDeliv = nan, nan
	if openErr == nil {
		// RSS with every stream open (sampled as soon as they are, before
		// publishing starts) minus RSS of the idle server.
		res.rssPerStream = float64(open.rssKB-idle.rssKB) / float64(n)
	} else {
		res.note = openErr.Error()
	}
	if openErr == nil && w.err == nil {
		_, res.cpuPerDeliv = w.perRequest(res.deliveries)
	} else if w.err != nil {
		res.note = w.err.Error()
	}
	// Errors are per publish request or per stream (listen_failed,
	// listen_ended, listen_dropped): more than 1% of both together fails the row.
	if e := load.errorCount(); e > 0 && e/(load.Requests+float64(n)) > 0.01 {
		res.err = fmt.Errorf("%.0f errors: %s", e, string(load.Errors))
	}
	if res.err == nil && (isNaN(res.deliveries) || res.deliveries <= 0) {
		res.err = fmt.Errorf("no deliveries")
	}
	select {
	case <-srv.done:
		if res.err == nil {
			res.err = fmt.Errorf("server exited during the run:\n%s", srv.tail.String())
		}
	default:
	}
	return res
}

// countFDs is the number of open descriptors of pid (0 if unreadable).
func countFDs(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0
	}
	return len(ents)
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	return nan
}

func firstNum(m map[string]any, keys ...string) float64 {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if f := num(v); !isNaN(f) {
				return f
			}
		}
	}
	return nan
}

func firstMap(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		if v, ok := m[k].(map[string]any); ok {
			return v
		}
	}
	return map[string]any{}
}

func runFanout(cfg config) bool {
	rows := selectFanRows(fanoutRows(cfg), cfg.only)
	for _, r := range rows {
		if r.unsupported == "" {
			if _, err := os.Stat(r.server[0]); err != nil {
				fatal(fmt.Errorf("%s: %v (run make compare-fanout, which builds it)", r.name, err))
			}
		}
	}
	header(cfg)
	ok := true
	head := []string{"streams", "row", "deliveries/s", "vs raw", "arrived", "p50 µs", "p99 µs", "RSS KiB/stream", "srv CPU µs/delivery", "gen CPU µs/delivery"}
	var out [][]string
	var notes []string
	for _, n := range cfg.listeners {
		results := make([][]fanResult, len(rows))
		for round := 0; round < cfg.rounds; round++ {
			for k := range rows {
				i := (k + round) % len(rows)
				r := rows[i]
				if r.unsupported != "" {
					continue
				}
				fmt.Fprintf(os.Stderr, "fan-out %d streams, round %d/%d: %-14s ", n, round+1, cfg.rounds, r.name)
				res := runFanRow(cfg, r, i, n, round+1)
				if res.err != nil {
					fmt.Fprintf(os.Stderr, "FAILED (%v)\n", res.err)
				} else {
					fmt.Fprintf(os.Stderr, "%10.0f deliveries/s  p50 %7.0f µs  p99 %8.0f µs  %.1f KiB/stream\n",
						res.deliveries, res.p50, res.p99, res.rssPerStream)
				}
				if res.note != "" {
					fmt.Fprintf(os.Stderr, "    %s\n", res.note)
					notes = append(notes, fmt.Sprintf("%s, %d streams, round %d: %s", r.name, n, round+1, res.note))
				}
				if results[i] == nil {
					results[i] = make([]fanResult, cfg.rounds)
				}
				results[i][round] = res
			}
		}
		ceilOf := map[bool]int{}
		for i, r := range rows {
			if r.ceiling {
				ceilOf[r.unique] = i
			}
		}
		for i, r := range rows {
			ceil, hasCeil := ceilOf[r.unique]
			if !hasCeil {
				ceil = -1
			}
			if r.unsupported != "" {
				out = append(out, []string{fmt.Sprint(n), r.name, "—", "—", "—", "—", "—", "—", "—", "—"})
				notes = append(notes, r.name+": "+r.unsupported)
				continue
			}
			var dps, ratio, arr, p50, p99, rss, cpu, gen []float64
			failed := 0
			for round, res := range results[i] {
				if res.err != nil {
					failed++
					ok = false
					notes = append(notes, fmt.Sprintf("FAILED %s, %d streams, round %d: %v", r.name, n, round+1, res.err))
					continue
				}
				dps = append(dps, res.deliveries)
				arr = append(arr, res.arrived)
				p50 = append(p50, res.p50)
				p99 = append(p99, res.p99)
				rss = append(rss, res.rssPerStream)
				cpu = append(cpu, res.cpuPerDeliv)
				gen = append(gen, res.genCPU)
				if ceil >= 0 {
					if c := results[ceil][round]; c.err == nil && c.deliveries > 0 {
						ratio = append(ratio, res.deliveries/c.deliveries)
					}
				}
			}
			dCell := report.FmtNum(report.Median(dps), 0)
			if failed == len(results[i]) {
				dCell = "FAILED"
			} else if failed > 0 {
				dCell += fmt.Sprintf(" (%d/%d failed)", failed, len(results[i]))
			}
			rCell := report.FmtNum(report.Median(ratio), 2)
			if r.ceiling {
				rCell = "ceiling"
			}
			arrCell := "—"
			if a := report.Median(arr); !isNaN(a) {
				arrCell = report.FmtNum(100*a, 1) + "%"
			}
			out = append(out, []string{fmt.Sprint(n), r.name, dCell, rCell, arrCell, report.FmtNum(report.Median(p50), 0), report.FmtNum(report.Median(p99), 0),
				report.FmtNum(report.Median(rss), 2), report.FmtNum(report.Median(cpu), 2), report.FmtNum(report.Median(gen), 2)})
		}
	}
	for _, r := range rows {
		if r.note != "" {
			notes = append([]string{r.note}, notes...)
		}
	}
	report.PrintGrid(head, out, 2)
	fmt.Println()
	fmt.Printf("Each stream is one subscriptions/listen POST on its own connection, subscribed to test://load; the publisher\n")
	fmt.Printf("calls the touch tool %d times a second and every call fans one notifications/resources/updated out to every\n", cfg.pubRate)
	fmt.Println("stream. Deliveries/s and latency (touch sent → event read) come from the generator; \"vs raw\" is the median per-round")
	fmt.Println("ratio to raw SSE (which answers a touch only after writing to every stream, so a server that answers first and")
	fmt.Println("delivers in the background can pass it when saturated); arrived = deliveries / (touch calls answered × streams).")
	fmt.Println("\"URI per touch\" rows: the k-th touch names test://load/k, a sub-resource of the subscribed URI (SUB-06:")
	fmt.Println("the protocol subscribes to a URI and its sub-resources, there is no wildcard), so no update can collapse into")
	fmt.Println("another; the generator checks per stream that every publish arrived once, and any loss fails the row. Their")
	fmt.Println("\"vs raw\" is against raw SSE doing the same (one frame per touch and stream, the stream's id and the touched URI).")
	fmt.Println("RSS KiB/stream = (server RSS once every stream is open and acknowledged, before publishing −")
	fmt.Println("RSS of the idle server) / streams. CPU per delivery: server CPU over the measured window / deliveries in it.")
	for _, n := range dedup(notes) {
		fmt.Println(strings.TrimSpace(n))
	}
	fanoutChart.writeChartNote(cfg.outDir, head, out, dedup(notes)) // chart.go
	return ok
}

func dedup(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
