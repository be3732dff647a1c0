package legacy_test

import (
	"os/exec"
	"strings"
	"testing"
)

// No modern package depends on this one: the 2026-07-28 path builds
// without it (DESIGN.md's package map).
func TestModernPackagesDoNotImportLegacy(t *testing.T) {
	modern := []string{"engine", "engine/streamhttp", "engine/stdio", "engine/socket", "engine/linestream", "engine/state", "engine/state/redisstate", "engine/client", "codec", "framing"}
	args := []string{"list", "-deps"}
	for _, p := range modern {
		args = append(args, "github.com/mcpwire/mcpwire/"+p)
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/mcpwire/mcpwire/engine/legacy" {
			t.Fatal("a modern package imports engine/legacy")
		}
	}
	if !strings.Contains(string(out), "github.com/mcpwire/mcpwire/engine/streamhttp") {
		t.Fatalf("go list output does not name the modern packages:\n%s", out)
	}
}
