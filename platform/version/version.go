// Package version is the version every binary prints with -version.
package version

import (
	"runtime/debug"
	"strings"
)

// Version is the version the build was given:
//
//	go build -ldflags '-X github.com/defectshowcase/showcase/platform/version.Version=v1.2.3'
//
// make build gives it git's description of the checkout.
var Version = ""

// String is Version when the build was given one, else the main module's
// version (a tagged `go install` has one), else "(devel)" with the commit
// the binary was built from, as the Go toolchain recorded it.
func String() string {
	if Version != "" {
		return Version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return strings.TrimSpace("(devel) " + rev + dirty)
}
