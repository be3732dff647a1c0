package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// `mcpwire load -hgrm FILE -html FILE` writes both files after the run: the
// .hgrm counts every measured request, the page holds the charts.
func TestLoadWritesReports(t *testing.T) {
	t.Setenv("MCPWIRE_TEST_SERVE_STDIO", "1") // the spawned test binary serves stdio
	dir := t.TempDir()
	hgrm, page := filepath.Join(dir, "run.hgrm"), filepath.Join(dir, "run.html")
	err := runLoad(context.Background(), []string{"-n", "300", "-warmup", "0s", "-progress", "off", "-json",
		"-hgrm", hgrm, "-html", page, "stdio:" + os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	h, err := os.ReadFile(hgrm)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(h), "       Value     Percentile TotalCount 1/(1-Percentile)\n\n") ||
		!regexp.MustCompile(`#\[Max += +[0-9.]+, Total count += +300\]`).Match(h) {
		t.Errorf("run.hgrm:\n%s", h)
	}
	p, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "Throughput over time", "Latency over time", "Latency by percentile", "stdio:"} {
		if !strings.Contains(string(p), want) {
			t.Errorf("run.html has no %q", want)
		}
	}
}

func TestDeliveriesPath(t *testing.T) {
	for in, want := range map[string]string{"run.hgrm": "run.deliveries.hgrm", "out/x": "out/x.deliveries", "a.b/c.hgrm": "a.b/c.deliveries.hgrm"} {
		if got := deliveriesPath(in); got != want {
			t.Errorf("deliveriesPath(%q) = %q, want %q", in, got, want)
		}
	}
}
