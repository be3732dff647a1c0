package engine

import "runtime/debug"

// moduleVersion returns the version of the mcpwire module in this binary,
// or "devel".
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if bi.Main.Path == "github.com/mcpwire/mcpwire" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/mcpwire/mcpwire" {
			return d.Version
		}
	}
	return "devel"
}
