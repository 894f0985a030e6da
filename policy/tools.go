package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ArgType is the JSON type of one tool argument.
type ArgType string

// The argument types of the contract.
const (
	ArgString     ArgType = "string"
	ArgInteger    ArgType = "integer"
	ArgBoolean    ArgType = "boolean"
	ArgStringList ArgType = "array of strings"
)

// ArgSpec describes one argument of a tool.
type ArgSpec struct {
	Name        string
	Type        ArgType
	Required    bool
	Description string
}

// Hints say what a tool does to the world, as MCP's tool annotations do.
// They describe the tool, not a call: a shell command may do anything, so
// shell claims nothing.
type Hints struct {
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
}

// ToolSpec is one tool of the contract (docs/reference.md, The call and the decision): its name, what it does
// in words a model reads, and its arguments. Every surface that names tools
// (decoding, CLI help, the MCP server) takes them from [ToolSpecs].
type ToolSpec struct {
	Name        string
	Title       string
	Description string
	Args        []ArgSpec
	Hints       Hints
}

// ToolSpecs returns the tool table, in the contract's order. The slice is
// new on every call; callers may keep it.
func ToolSpecs() []ToolSpec {
	pathArg := func(doc string) ArgSpec {
		return ArgSpec{Name: "path", Type: ArgString, Required: true, Description: doc}
	}
	return []ToolSpec{
		{Name: ToolReadFile, Title: "Read file",
			Description: "Read a text file inside the session's scope. Returns its content; offset and limit select lines.",
			Args: []ArgSpec{
				pathArg("file to read, absolute or relative to the call's cwd"),
				{Name: "offset", Type: ArgInteger, Description: "first line to return, counting from 1"},
				{Name: "limit", Type: ArgInteger, Description: "how many lines to return at most"},
			},
			Hints: Hints{ReadOnly: true, Idempotent: true}},
		{Name: ToolWriteFile, Title: "Write file",
			Description: "Create or replace a file inside the writable part of the session's scope with the given content.",
			Args: []ArgSpec{
				pathArg("file to write, absolute or relative to the call's cwd"),
				{Name: "content", Type: ArgString, Required: true, Description: "the whole new content of the file"},
			},
			Hints: Hints{Destructive: true, Idempotent: true}},
		{Name: ToolEditFile, Title: "Edit file",
			Description: "Replace text in a file inside the writable part of the session's scope. old_string must occur exactly once unless replace_all is true.",
			Args: []ArgSpec{
				pathArg("file to edit, absolute or relative to the call's cwd"),
				{Name: "old_string", Type: ArgString, Required: true, Description: "the exact text to replace"},
				{Name: "new_string", Type: ArgString, Required: true, Description: "the text to put in its place"},
				{Name: "replace_all", Type: ArgBoolean, Description: "replace every occurrence instead of exactly one"},
			},
			Hints: Hints{Destructive: true}},
		{Name: ToolListDir, Title: "List directory",
			Description: "List the entries of a directory inside the session's scope.",
			Args:        []ArgSpec{pathArg("directory to list, absolute or relative to the call's cwd")},
			Hints:       Hints{ReadOnly: true, Idempotent: true}},
		{Name: ToolGlob, Title: "Find files by pattern",
			Description: "Find files whose paths match a doublestar glob (such as **/*.go) below a directory inside the session's scope.",
			Args: []ArgSpec{
				{Name: "pattern", Type: ArgString, Required: true, Description: "doublestar glob, relative to path"},
				{Name: "path", Type: ArgString, Description: "directory to search (default: the call's cwd)"},
			},
			Hints: Hints{ReadOnly: true, Idempotent: true}},
		{Name: ToolGrep, Title: "Search file contents",
			Description: "Search files below a directory inside the session's scope for lines matching a regular expression (RE2 syntax).",
			Args: []ArgSpec{
				{Name: "pattern", Type: ArgString, Required: true, Description: "regular expression, RE2 syntax"},
				{Name: "path", Type: ArgString, Description: "file or directory to search (default: the call's cwd)"},
				{Name: "include", Type: ArgString, Description: "only files whose names match this glob, such as *.go"},
			},
			Hints: Hints{ReadOnly: true, Idempotent: true}},
		{Name: ToolShell, Title: "Run shell command",
			Description: "Run a bash command line, confined to the session's scope: every program and path in it is checked before and while it runs.",
			Args: []ArgSpec{
				{Name: "command", Type: ArgString, Required: true, Description: "the command line, bash syntax"},
				{Name: "timeout_ms", Type: ArgInteger, Description: "kill the command after this many milliseconds"},
				{Name: "stdin", Type: ArgString, Description: "text given to the command on its standard input"},
			},
			Hints: Hints{Destructive: true, OpenWorld: true}},
		{Name: ToolRoamCreateNode, Title: "Create org-roam note",
			Description: "Create an org-roam note with a title, optionally in a subdirectory and with tags, where the scope's org_roam_patterns allow.",
			Args: []ArgSpec{
				{Name: "title", Type: ArgString, Required: true, Description: "the note's title"},
				{Name: "subdirectory", Type: ArgString, Description: "subdirectory of the org-roam directory"},
				{Name: "tags", Type: ArgStringList, Description: "tags of the note"},
			}},
		{Name: ToolRoamReadNode, Title: "Read org-roam note",
			Description: "Read an org-roam note by its ID, where the scope's org_roam_patterns allow.",
			Args:        []ArgSpec{{Name: "node_id", Type: ArgString, Required: true, Description: "the note's ID property"}},
			Hints:       Hints{ReadOnly: true, Idempotent: true}},
		{Name: ToolRoamAddTags, Title: "Tag org-roam note",
			Description: "Add tags to an org-roam note, where the scope's org_roam_patterns allow.",
			Args: []ArgSpec{
				{Name: "node_id", Type: ArgString, Required: true, Description: "the note's ID property"},
				{Name: "tags", Type: ArgStringList, Required: true, Description: "tags to add"},
			},
			Hints: Hints{Idempotent: true}},
		{Name: ToolRoamLinkNodes, Title: "Link org-roam notes",
			Description: "Add a link from one org-roam note to another, where the scope's org_roam_patterns allow.",
			Args: []ArgSpec{
				{Name: "source_id", Type: ArgString, Required: true, Description: "ID of the note that gets the link"},
				{Name: "target_id", Type: ArgString, Required: true, Description: "ID of the note linked to"},
			},
			Hints: Hints{Idempotent: true}},
	}
}

// LookupTool returns the spec of the tool named name.
func LookupTool(name string) (ToolSpec, bool) {
	for _, t := range ToolSpecs() {
		if t.Name == name {
			return t, true
		}
	}
	return ToolSpec{}, false
}

// InputSchema returns the tool's arguments as a JSON Schema object (draft
// 2020-12), unknown properties refused.
func (t ToolSpec) InputSchema() map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, a := range t.Args {
		p := map[string]any{"description": a.Description}
		switch a.Type {
		case ArgStringList:
			p["type"] = "array"
			p["items"] = map[string]any{"type": "string"}
		case ArgInteger:
			p["type"] = "integer"
			p["minimum"] = 0
		default:
			p["type"] = string(a.Type)
		}
		props[a.Name] = p
		if a.Required {
			required = append(required, a.Name)
		}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// Usage is a one-line synopsis of the tool's arguments, optional ones in
// brackets: `path, offset?, limit?`.
func (t ToolSpec) Usage() string {
	parts := make([]string, len(t.Args))
	for i, a := range t.Args {
		parts[i] = a.Name
		if !a.Required {
			parts[i] += "?"
		}
	}
	return strings.Join(parts, ", ")
}

// CheckArgs checks a call's args against the tool's spec and says what is
// wrong in the contract's words: the argument, the type it must have and the
// type it has. It accepts what [DecodeArgs] into the tool's args type
// accepts, with the required arguments present.
func (t ToolSpec) CheckArgs(raw json.RawMessage) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("args of %s must be a JSON object, got %s", t.Name, jsonKind(raw))
	}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		i := slices.IndexFunc(t.Args, func(a ArgSpec) bool { return a.Name == k })
		if i < 0 {
			return fmt.Errorf("%s has no argument %q (its arguments: %s)", t.Name, k, t.Usage())
		}
		if err := t.Args[i].check(fields[k]); err != nil {
			return fmt.Errorf("%s argument %q: %w", t.Name, k, err)
		}
	}
	for _, a := range t.Args {
		if _, ok := fields[a.Name]; a.Required && !ok {
			return fmt.Errorf("%s needs argument %q (its arguments: %s)", t.Name, a.Name, t.Usage())
		}
	}
	return nil
}

// check reports whether v has the spec's type.
func (a ArgSpec) check(v json.RawMessage) error {
	kind := jsonKind(v)
	ok := false
	switch a.Type {
	case ArgString:
		ok = kind == "a string"
	case ArgBoolean:
		ok = kind == "a boolean"
	case ArgInteger:
		var n int64
		ok = kind == "a number" && json.Unmarshal(v, &n) == nil
		if kind == "a number" && !ok {
			return fmt.Errorf("must be a whole number, got %s", bytes.TrimSpace(v))
		}
	case ArgStringList:
		var l []string
		ok = kind == "an array" && json.Unmarshal(v, &l) == nil
		if kind == "an array" && !ok {
			return fmt.Errorf("must be an array of strings, got an array with other values")
		}
	}
	if !ok {
		return fmt.Errorf("must be %s, got %s", article(a.Type), kind)
	}
	return nil
}

// article is "a" or "an" with the type's name.
func article(t ArgType) string {
	switch t {
	case ArgInteger:
		return "an integer"
	case ArgStringList:
		return "an array of strings"
	default:
		return "a " + string(t)
	}
}

// jsonKind names the JSON type of a value as a user would: "a string",
// "an array", "null".
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
