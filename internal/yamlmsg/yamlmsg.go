// Package yamlmsg words the errors of strict YAML decoding in the file's own
// terms: the line, the key path, the expected and the found type, never a
// Go type name. It also finds the list entries other YAML readers read
// differently ([AmbiguousEntries]), for a warning in the same terms.
package yamlmsg

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// patterns recognise the decoder's messages. They are compiled on the
// error path only: every command decodes YAML, few meet an error.
type patterns struct {
	notFound, cannot, line *regexp.Regexp
}

// compilePatterns compiles the patterns of the decoder's messages.
func compilePatterns() patterns {
	return patterns{
		notFound: regexp.MustCompile(`(?s)^line (\d+): field (.*) not found in type (\S+)$`),
		cannot:   regexp.MustCompile("(?s)^line (\\d+): cannot unmarshal (!\\S*) (?:`(.*)` )?into (.+)$"),
		line:     regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`),
	}
}

// Error words err, an error of decoding data into target (a pointer, as
// given to the decoder), in the file's own terms: the line, the key path
// ("paths.read"), what was expected and what was found; never a Go type.
// Several errors are joined on one line.
func Error(data []byte, err error, target any) error {
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root) // best effort: only names key paths
	p := compilePatterns()
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, e := range te.Errors {
			msgs[i] = p.message(&root, e, target)
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	msg := strings.TrimPrefix(oneLineText(err.Error()), "yaml: ")
	if m := p.line.FindStringSubmatch(msg); m != nil {
		return errors.New(p.message(&root, "line "+m[1]+": "+m[2], target))
	}
	return errors.New(msg)
}

// message words one message e of the decoder in the file's own terms.
func (p patterns) message(root *yaml.Node, e string, target any) string {
	if m := p.notFound.FindStringSubmatch(e); m != nil {
		line, _ := strconv.Atoi(m[1])
		path := keyPathAt(root, line, m[2])
		parent := "the top level"
		if i := strings.LastIndexByte(path, '.'); i > 0 {
			parent = path[:i]
		}
		msg := fmt.Sprintf("line %d: unknown key %q in %s", line, m[2], parent)
		if known := knownKeys(reflect.TypeOf(target))[m[3]]; len(known) > 0 {
			msg += " (known: " + strings.Join(known, ", ") + ")"
		}
		return msg
	}
	if m := p.cannot.FindStringSubmatch(e); m != nil {
		line, _ := strconv.Atoi(m[1])
		where := keyPathAt(root, line, "")
		if where == "" {
			where = "the value"
		}
		got := yamlKind(m[2])
		if m[3] != "" {
			got += " (" + oneLineText(m[3]) + ")"
		}
		return fmt.Sprintf("line %d: %s must be %s, got %s", line, where, goTypeWords(m[4]), got)
	}
	return oneLineText(e)
}

// keyPathAt is the dotted key path ("paths.read", "paths.read[1]") of the
// first node on line: the key named key when given, else a value (the
// decoder reports a type error at the outermost node that does not fit).
func keyPathAt(n *yaml.Node, line int, key string) string {
	best := ""
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if best == "" && (key != "" && k.Line == line && k.Value == key ||
					key == "" && v.Line == line && (v.Kind == yaml.ScalarNode || k.Line == line)) {
					best = p
				}
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				if best == "" && key == "" && c.Line == line {
					best = p
				}
				walk(c, p)
			}
		}
	}
	walk(n, "")
	return best
}

// knownKeys maps the Go type names the YAML decoder reports to the keys of
// that mapping, read from the yaml tags of t and the types it holds.
func knownKeys(t reflect.Type) map[string][]string {
	out := map[string][]string{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			return
		}
		if _, seen := out[t.String()]; seen {
			return
		}
		keys := []string{}
		out[t.String()] = keys
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			keys = append(keys, name)
			visit(f.Type)
		}
		out[t.String()] = keys
	}
	visit(t)
	return out
}

func yamlKind(tag string) string {
	switch strings.TrimPrefix(tag, "!!") {
	case "str":
		return "a string"
	case "int", "float":
		return "a number"
	case "bool":
		return "a boolean"
	case "map":
		return "a mapping"
	case "seq":
		return "a list"
	case "null":
		return "nothing"
	}
	return "a value tagged " + tag
}

func goTypeWords(t string) string {
	switch {
	case t == "[]string":
		return "a list of strings"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"), strings.HasPrefix(t, "float"):
		return "a number"
	}
	return "a mapping"
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }
