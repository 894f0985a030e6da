package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Call is one tool call as agents send it (docs/reference.md, The call and the decision).
type Call struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
	Cwd  string          `json:"cwd,omitempty"`
}

// Tool names of the contract.
const (
	ToolReadFile       = "read_file"
	ToolWriteFile      = "write_file"
	ToolEditFile       = "edit_file"
	ToolListDir        = "list_dir"
	ToolGlob           = "glob"
	ToolGrep           = "grep"
	ToolShell          = "shell"
	ToolRoamCreateNode = "roam_create_node"
	ToolRoamReadNode   = "roam_read_node"
	ToolRoamAddTags    = "roam_add_tags"
	ToolRoamLinkNodes  = "roam_link_nodes"
)

// Tools lists every known tool name, in the order of [ToolSpecs].
func Tools() []string {
	return []string{
		ToolReadFile, ToolWriteFile, ToolEditFile, ToolListDir, ToolGlob, ToolGrep, ToolShell,
		ToolRoamCreateNode, ToolRoamReadNode, ToolRoamAddTags, ToolRoamLinkNodes,
	}
}

// KnownTool reports whether name is a tool of the contract.
func KnownTool(name string) bool {
	switch name {
	case ToolReadFile, ToolWriteFile, ToolEditFile, ToolListDir, ToolGlob, ToolGrep, ToolShell,
		ToolRoamCreateNode, ToolRoamReadNode, ToolRoamAddTags, ToolRoamLinkNodes:
		return true
	}
	return false
}

// ReadFileArgs are the args of read_file.
type ReadFileArgs struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset,omitempty"`
	Limit  *int   `json:"limit,omitempty"`
}

// WriteFileArgs are the args of write_file.
type WriteFileArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

// EditFileArgs are the args of edit_file.
type EditFileArgs struct {
	Path       string  `json:"path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all,omitempty"`
}

// ListDirArgs are the args of list_dir.
type ListDirArgs struct {
	Path string `json:"path"`
}

// GlobArgs are the args of glob.
type GlobArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
}

// GrepArgs are the args of grep.
type GrepArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
	Include string `json:"include,omitempty"`
}

// ShellArgs are the args of shell.
type ShellArgs struct {
	Command   string  `json:"command"`
	TimeoutMS *int64  `json:"timeout_ms,omitempty"`
	Stdin     *string `json:"stdin,omitempty"`
}

// RoamCreateNodeArgs are the args of roam_create_node.
type RoamCreateNodeArgs struct {
	Title        string   `json:"title"`
	Subdirectory string   `json:"subdirectory,omitempty"`
	Tags         []string `json:"tags,omitempty"`
}

// RoamReadNodeArgs are the args of roam_read_node.
type RoamReadNodeArgs struct {
	NodeID string `json:"node_id"`
}

// RoamAddTagsArgs are the args of roam_add_tags.
type RoamAddTagsArgs struct {
	NodeID string   `json:"node_id"`
	Tags   []string `json:"tags"`
}

// RoamLinkNodesArgs are the args of roam_link_nodes.
type RoamLinkNodesArgs struct {
	SourceID string `json:"source_id"`
	TargetID string `json:"target_id"`
}

// ErrInvalidCall marks a call document that is not a JSON object of the
// contract's shape (as opposed to a well-formed call that is denied).
var ErrInvalidCall = errors.New("invalid call")

// ParseCall decodes a call document strictly: unknown top-level keys and
// trailing data are errors wrapping [ErrInvalidCall]. The args are decoded
// later, per tool, by [DecodeArgs].
func ParseCall(data []byte) (Call, error) {
	var c Call
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if len(bytes.TrimSpace(data)) == 0 {
		return Call{}, fmt.Errorf("%w: no call given", ErrInvalidCall)
	}
	if err := dec.Decode(&c); err != nil {
		return Call{}, fmt.Errorf("%w: %v", ErrInvalidCall, callError(data, err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Call{}, fmt.Errorf("%w: trailing data after the call object", ErrInvalidCall)
	}
	if c.Tool == "" {
		return Call{}, fmt.Errorf("%w: missing \"tool\"", ErrInvalidCall)
	}
	return c, nil
}

// DecodeArgs decodes a call's args into v strictly (unknown or ill-typed
// fields are errors).
func DecodeArgs(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return argsError(raw, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("args: trailing data after the args object")
	}
	return nil
}

// argsError says what is wrong with args in the contract's words (the
// argument, the type it must have, the type it has), never in Go's.
func argsError(raw json.RawMessage, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return fmt.Errorf("args must be a JSON object, got %s", jsonKind(raw))
	case errors.As(err, &typeErr):
		return fmt.Errorf("argument %q must be %s, got %s", typeErr.Field, userType(typeErr.Type.String()), articled(typeErr.Value))
	case errors.As(err, &syntaxErr):
		return fmt.Errorf("args are not valid JSON (at byte %d)", syntaxErr.Offset)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("no argument %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		return fmt.Errorf("args: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
}

// callError words an error of decoding a call document in the contract's
// terms: never a Go type name.
func callError(data []byte, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return fmt.Errorf(`a call must be a JSON object {"tool": ..., "args": {...}, "cwd": ...}, got %s`, jsonKind(data))
	case errors.As(err, &typeErr):
		want := userType(typeErr.Type.String())
		if typeErr.Field == "args" {
			want = "an object"
		}
		return fmt.Errorf("%q must be %s, got %s", typeErr.Field, want, articled(typeErr.Value))
	case errors.As(err, &syntaxErr):
		return fmt.Errorf("not valid JSON at byte %d: %s", syntaxErr.Offset, strings.TrimPrefix(err.Error(), "invalid character"))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the JSON ends early")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Errorf("unknown key %s (a call has tool, args and cwd)", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		return errors.New(strings.TrimPrefix(err.Error(), "json: "))
	}
}

// userType names a Go type of an args field as its JSON type.
func userType(goType string) string {
	switch strings.TrimPrefix(goType, "*") {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64":
		return "an integer"
	case "[]string":
		return "an array of strings"
	default:
		return "a different type"
	}
}

// articled puts an article before the JSON type name encoding/json reports
// ("array", "bool", "number 1.5").
func articled(jsonType string) string {
	switch {
	case jsonType == "array" || jsonType == "object":
		return "an " + jsonType
	case jsonType == "bool":
		return "a boolean"
	case strings.HasPrefix(jsonType, "number "):
		return "the number " + strings.TrimPrefix(jsonType, "number ")
	default:
		return "a " + jsonType
	}
}
