package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpwire/mcpwire/internal/load"
)

// writeLoadReports writes the files of -hgrm and -html ("" = not asked).
func writeLoadReports(res *load.Result, hgrmPath, htmlPath string) error {
	var errs []error
	if hgrmPath != "" {
		errs = append(errs, writeFile(hgrmPath, res.WriteHGRM))
		if res.Workload == load.WorkloadListen {
			errs = append(errs, writeFile(deliveriesPath(hgrmPath), res.WriteDeliveryHGRM))
		}
	}
	if htmlPath != "" {
		errs = append(errs, writeFile(htmlPath, res.WriteHTML))
	}
	return errors.Join(errs...)
}

// deliveriesPath inserts ".deliveries" before the extension: run.hgrm →
// run.deliveries.hgrm.
func deliveriesPath(p string) string {
	ext := filepath.Ext(p)
	return strings.TrimSuffix(p, ext) + ".deliveries" + ext
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
