package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionInfo is what `scopegate version` prints.
type versionInfo struct {
	// Version is the module version, or "devel" for a build from a checkout.
	Version string `json:"version"`
	// Revision is the VCS revision the binary was built from, if known.
	Revision string `json:"revision,omitempty"`
	// Time is the commit time of Revision, if known.
	Time string `json:"time,omitempty"`
	// Dirty reports uncommitted changes in the checkout it was built from.
	Dirty bool `json:"dirty,omitempty"`
	// Go is the Go version the binary was built with.
	Go string `json:"go"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// readVersion reads the version from the build information Go embeds.
func readVersion() versionInfo {
	v := versionInfo{Version: "devel", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Dirty = s.Value == "true"
		}
	}
	return v
}

// String is the one-line form: "scopegate VERSION (REVISION[+dirty], GO, OS/ARCH)".
func (v versionInfo) String() string {
	rev := ""
	if v.Revision != "" {
		rev = shortRev(v.Revision)
		if v.Dirty {
			rev += "+dirty"
		}
		rev += ", "
	}
	return fmt.Sprintf("scopegate %s (%s%s, %s)", v.Version, rev, v.Go, v.Platform)
}

func shortRev(r string) string {
	if len(r) > 12 {
		return r[:12]
	}
	return r
}

func newVersionCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and Go version",
		Long: `Print the version of scopegate: the module version (or "devel" for a build
from a checkout), the VCS revision it was built from with "+dirty" when the
checkout had uncommitted changes, and the Go version. "scopegate --version"
prints the same line.`,
		Example: `  scopegate version
  scopegate version --json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := readVersion()
			if asJSON {
				return writeJSON(a.stdout, v)
			}
			fmt.Fprintln(a.stdout, v.String())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
