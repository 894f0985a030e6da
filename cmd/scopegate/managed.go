package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/scopegate/scopegate/config"
	"github.com/scopegate/scopegate/policy"
)

// How `scope show` and `profiles show` print the machine's managed policy:
// as YAML comments before the scope, so that the output stays the scope's
// YAML, and under "managed" with --json.

// managedJSON is the managed policy as --json prints it.
type managedJSON struct {
	File      string               `json:"file"`
	FromEnv   bool                 `json:"from_env,omitempty"`
	SHA256    string               `json:"sha256,omitempty"`
	Error     string               `json:"error,omitempty"`
	Rules     *policy.ManagedRules `json:"rules,omitempty"`
	Modes     *config.ManagedModes `json:"modes,omitempty"`
	Approvals string               `json:"approvals,omitempty"`
	Telemetry string               `json:"telemetry,omitempty"`
	// Beyond are the scope's entries that reach beyond the policy.
	Beyond []policy.Excess `json:"beyond,omitempty"`
}

// managedView is the managed policy of this run as shown, nil when there
// is none; with doc, the entries of doc beyond it.
func (a *app) managedView(doc *policy.Document) *managedJSON {
	m, err := a.managedPolicy()
	if err != nil {
		return &managedJSON{File: config.ManagedPath, Error: err.Error()}
	}
	if m == nil {
		return nil
	}
	r := m.File.Rules()
	v := &managedJSON{File: m.Path, FromEnv: m.FromEnv, SHA256: m.SHA256, Rules: &r, Approvals: m.File.Approvals}
	if m.File.Modes.Observe != nil {
		v.Modes = &m.File.Modes
	}
	if t := m.File.Telemetry; t != nil {
		v.Telemetry = t.Endpoint
	}
	if doc != nil {
		home, _ := os.UserHomeDir()
		v.Beyond = m.Policy.Beyond(*doc, policy.Env{Home: home})
	}
	return v
}

// writeManagedComment prints v as YAML comments.
func writeManagedComment(w io.Writer, v *managedJSON) error {
	if v == nil {
		return nil
	}
	var b strings.Builder
	if v.Error != "" {
		fmt.Fprintf(&b, "# managed policy: cannot be used, every call is denied: %s\n", policy.OneLine(v.Error))
		_, err := io.WriteString(w, b.String())
		return err
	}
	src := v.File
	if v.FromEnv {
		src += " (named by " + config.ManagedEnv + "; " + config.ManagedPath + " does not exist)"
	}
	fmt.Fprintf(&b, "# managed policy: %s, sha256 %s; every call is decided within it:\n", src, v.SHA256)
	list := func(name string, l []string) {
		if l != nil {
			fmt.Fprintf(&b, "#   %s: [%s]\n", name, strings.Join(l, ", "))
		}
	}
	r := v.Rules
	list("paths.deny", r.Paths.Deny)
	if c := r.Paths.Ceiling; c != nil {
		fmt.Fprintf(&b, "#   paths.ceiling.read: [%s]\n", strings.Join(c.Read, ", "))
		fmt.Fprintf(&b, "#   paths.ceiling.write: [%s]\n", strings.Join(c.Write, ", "))
	}
	list("shell_commands.deny", r.Shell.Deny)
	switch r.Network.Mode {
	case "":
	case policy.NetworkList:
		list("network", r.Network.Hosts)
	default:
		fmt.Fprintf(&b, "#   network: %s\n", r.Network.Mode)
	}
	if v.Modes != nil {
		fmt.Fprintf(&b, "#   modes.observe: %v\n", *v.Modes.Observe)
	}
	if v.Approvals != "" {
		fmt.Fprintf(&b, "#   approvals: %s\n", v.Approvals)
	}
	if v.Telemetry != "" {
		fmt.Fprintf(&b, "#   telemetry: %s\n", v.Telemetry)
	}
	if len(v.Beyond) > 0 {
		b.WriteString("# beyond the managed policy, without effect:\n")
		for _, e := range v.Beyond {
			fmt.Fprintf(&b, "#   %s (%s)\n", policy.OneLine(e.Entry), e.Rule)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
