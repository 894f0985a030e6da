package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildInfo is what `scopegate version` reports: the module version, the VCS
// revision the binary was built from (with a dirty mark), and the Go
// version, all read from what the Go toolchain embedded in the binary.
type buildInfo struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: "(devel)", GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if bi.Main.Version != "" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one-line form: `scopegate v1.2.3 (rev 0123abc, dirty) go1.26.0`.
func (b buildInfo) String() string {
	s := "scopegate " + b.Version
	if b.Revision != "" {
		rev := b.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s += " (rev " + rev
		if b.Modified {
			s += ", dirty"
		}
		s += ")"
	}
	return s + " " + b.GoVersion
}

func newVersionCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the version, the revision it was built from and the Go version",
		Example: "  scopegate version\n  scopegate version --json",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			b := readBuildInfo()
			if asJSON {
				return writeJSON(a.stdout, b)
			}
			fmt.Fprintln(a.stdout, b.String())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
