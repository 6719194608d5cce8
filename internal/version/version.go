// Package version says which lockgate this is: the version the build
// stamped in (-ldflags "-X github.com/lockgate/lockgate/internal/version.Version=v1.2.3"),
// else the module version `go install` recorded, else "(devel)". Every
// lockgate binary reads it here, so that they all say the same.
package version

import "runtime/debug"

// Version is set at build time with -ldflags -X.
var Version = ""

// String is the version of this build.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
