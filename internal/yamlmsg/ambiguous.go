package yamlmsg

import (
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// Ambiguous is a list entry written as a plain (unquoted) scalar that
// scopegate reads as a string (a null as no entry) and another YAML reader
// reads as a boolean, a number or null: gptel's own reader, Emacs's yaml.el,
// a YAML 1.1 reader, or a YAML 1.2 one reading into untyped values.
//
// Quoting makes the entry a string to every YAML reader but yaml.el, which
// resolves quoted scalars as it resolves plain ones (yaml.el 0.5 to 1.2):
// to gptel, "true" is t and "1" is 1 however they are written.
type Ambiguous struct {
	// Line is the entry's line in the file, from 1.
	Line int
	// Path is the key path of the list ("shell_commands.allow").
	Path string
	// Value is the entry as written.
	Value string
	// Kind is what the other reader makes of it: "a boolean", "a number"
	// or "null".
	Kind string
	// Gptel reports whether yaml.el, gptel's reader, reads it so, quoted
	// or not; when false only other readers do (yaml.el reads the string).
	Gptel bool
}

// String words the entry and its fix on one line, as yamlmsg words errors.
func (a Ambiguous) String() string {
	quoted := `"` + a.Value + `"`
	switch {
	case a.Value == "":
		return fmt.Sprintf("line %d: %s has an empty entry: YAML reads it as null (scopegate as no entry, gptel's yaml.el as :null); remove it",
			a.Line, a.Path)
	case a.Kind == "null":
		return fmt.Sprintf("line %d: %s entry %s is unquoted: YAML reads it as null, scopegate as no entry; quote it if you mean the string: - %s (gptel's yaml.el reads :null even then)",
			a.Line, a.Path, a.Value, quoted)
	case a.Gptel:
		return fmt.Sprintf("line %d: %s entry %s is unquoted: YAML reads it as %s, scopegate as the string %s; quote it: - %s (gptel's yaml.el reads %s even then, and gptel does not match it)",
			a.Line, a.Path, a.Value, a.Kind, quoted, quoted, a.Kind)
	default:
		return fmt.Sprintf("line %d: %s entry %s is unquoted: other YAML readers (YAML 1.1) read it as %s, scopegate and gptel's yaml.el as the string %s; quote it: - %s",
			a.Line, a.Path, a.Value, a.Kind, quoted, quoted)
	}
}

// scalarKinds are the plain scalars other readers do not read as strings:
// yaml.el's (the YAML 1.2 core schema plus 0o and 0x, as yaml.el 0.5 to
// 1.2 resolve them) and YAML 1.1's (the boolean words and number forms of the
// YAML 1.1 type repository).
type scalarKinds struct {
	elNull, elBool, elNumber *regexp.Regexp
	v11Bool, v11Number       *regexp.Regexp
}

// compileKinds compiles the patterns of scalarKinds. Only commands that
// show a scope to a user look for ambiguous entries; no decision does.
func compileKinds() scalarKinds {
	return scalarKinds{
		elNull: regexp.MustCompile(`^(?:null|Null|NULL|~)$`),
		elBool: regexp.MustCompile(`^(?:true|True|TRUE|false|False|FALSE)$`),
		elNumber: regexp.MustCompile(`^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+` +
			`|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?` +
			`|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN))$`),
		v11Bool: regexp.MustCompile(`^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$`),
		v11Number: regexp.MustCompile(`^(?:[-+]?0b[01_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+` +
			`|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+` +
			`|[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+][0-9]+)?|[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?` +
			`|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`),
	}
}

// kind classifies a plain scalar of value v that yaml.v3 resolved to tag:
// what the other readers make of it, and whether yaml.el is one of them;
// "" when every reader reads a string.
func (k scalarKinds) kind(v, tag string) (kind string, gptel bool) {
	switch {
	case v == "" || k.elNull.MatchString(v):
		return "null", true
	case k.elBool.MatchString(v):
		return "a boolean", true
	case k.elNumber.MatchString(v):
		return "a number", true
	case k.v11Bool.MatchString(v):
		return "a boolean", false
	case k.v11Number.MatchString(v):
		return "a number", false
	}
	switch tag {
	case "!!bool":
		return "a boolean", false
	case "!!int", "!!float":
		return "a number", false
	case "!!null":
		return "null", false
	}
	return "", false
}

// AmbiguousEntries returns the entries of the lists in data, a YAML
// document, that are plain scalars another YAML reader does not read as
// strings (`- true`, `- yes`, `- 1`, `- ~`), in file order. Quoted
// entries, and a tag (which yaml.el ignores) aside, are never reported.
// Data that does not parse has none: its error is reported elsewhere.
func AmbiguousEntries(data []byte) []Ambiguous {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil
	}
	k := compileKinds()
	var out []Ambiguous
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := n.Content[i].Value
				if path != "" {
					p = path + "." + p
				}
				walk(n.Content[i+1], p)
			}
		case yaml.SequenceNode:
			for _, c := range n.Content {
				if c.Kind != yaml.ScalarNode {
					walk(c, path)
					continue
				}
				if c.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
					continue
				}
				if kind, gptel := k.kind(c.Value, c.ShortTag()); kind != "" {
					out = append(out, Ambiguous{Line: c.Line, Path: path, Value: c.Value, Kind: kind, Gptel: gptel})
				}
			}
		}
	}
	walk(&root, "")
	return out
}
