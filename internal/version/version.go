// Package version is what a harness binary says it is: its main module's version, as the
// build recorded it, for the version command and the MCP client's implementation info.
//
// # Concurrency
//
// The functions read the build information only; they may be called concurrently.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Main is the main module's version as the build recorded it, "(devel)" when it did not.
func Main() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// Line is the version command's line: prog, version (Main's unless given), the VCS revision
// when the build recorded one, the toolchain and the platform.
func Line(prog, version string) string {
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " " + s.Value[:12]
			}
		}
	}
	if version == "" {
		version = Main()
	}
	return fmt.Sprintf("%s %s%s %s %s/%s", prog, version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
