package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/scopegate/scopegate/internal/yamlmsg"
)

// Document is the parsed form of scope.yml (and of a scope profile: the same
// format). Every section is optional; a missing section is empty, and empty
// means deny.
type Document struct {
	Paths   PathRules  `yaml:"paths,omitempty" json:"paths"`
	OrgRoam RoamRules  `yaml:"org_roam_patterns,omitempty" json:"org_roam_patterns"`
	Shell   ShellRules `yaml:"shell_commands,omitempty" json:"shell_commands"`
	// Network is where the shell's programs may connect (see network.go).
	Network NetworkRules `yaml:"network,omitempty" json:"network"`
}

// PathRules are the doublestar globs of the paths section.
type PathRules struct {
	Read  []string `yaml:"read,omitempty" json:"read"`
	Write []string `yaml:"write,omitempty" json:"write"`
	Deny  []string `yaml:"deny,omitempty" json:"deny"`
}

// RoamRules are the org_roam_patterns section.
type RoamRules struct {
	Subdirectory []string `yaml:"subdirectory,omitempty" json:"subdirectory"`
	Tags         []string `yaml:"tags,omitempty" json:"tags"`
	NodeIDs      []string `yaml:"node_ids,omitempty" json:"node_ids"`
}

// ShellRules are the shell_commands section: entries split into words.
type ShellRules struct {
	Allow []string `yaml:"allow,omitempty" json:"allow"`
	Deny  []string `yaml:"deny,omitempty" json:"deny"`
}

// ErrInvalidScope marks every error of [ParseDocument] and [Compile]: the scope
// cannot be used and every call against it is denied with [ReasonScopeInvalid].
var ErrInvalidScope = errors.New("invalid scope")

// ParseDocument parses a scope document strictly: unknown keys, duplicate keys,
// wrong types and a second YAML document are errors wrapping [ErrInvalidScope].
// An empty document is a valid, empty scope.
func ParseDocument(data []byte) (Document, error) {
	var doc Document
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Document{}, nil
		}
		return Document{}, fmt.Errorf("%w: %v", ErrInvalidScope, yamlmsg.Error(data, err, &doc))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err == nil {
			return Document{}, fmt.Errorf("%w: more than one YAML document", ErrInvalidScope)
		}
		return Document{}, fmt.Errorf("%w: %v", ErrInvalidScope, yamlmsg.Error(data, err, &doc))
	}
	for _, l := range []*[]string{&doc.Paths.Read, &doc.Paths.Write, &doc.Paths.Deny} {
		for i, p := range *l {
			(*l)[i] = CleanPattern(p)
		}
	}
	return doc, nil
}

// CleanPattern folds repeated slashes and drops a trailing one, as editors
// and project tools write them (`/home/u/proj//**`, `/srv/data/`): the
// pattern means what it would mean written cleanly.
func CleanPattern(p string) string {
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		p = strings.TrimSuffix(p, "/")
	}
	return p
}

// Marshal renders the document as scope.yml text.
func (d Document) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("encode scope: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode scope: %w", err)
	}
	return buf.Bytes(), nil
}

// MarshalJSON renders missing lists as empty ones ([] rather than null):
// an empty list is what the scope means.
func (d Document) MarshalJSON() ([]byte, error) {
	type plain Document
	for _, l := range []*[]string{&d.Paths.Read, &d.Paths.Write, &d.Paths.Deny, &d.OrgRoam.Subdirectory,
		&d.OrgRoam.Tags, &d.OrgRoam.NodeIDs, &d.Shell.Allow, &d.Shell.Deny} {
		if *l == nil {
			*l = []string{}
		}
	}
	return json.Marshal(plain(d))
}
