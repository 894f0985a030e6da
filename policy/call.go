package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Call is one tool call as agents send it (CONTRACT.md §3).
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

// Tools lists every known tool name, in a fixed order.
func Tools() []string {
	return []string{
		ToolReadFile, ToolWriteFile, ToolEditFile, ToolListDir, ToolGlob, ToolGrep, ToolShell,
		ToolRoamCreateNode, ToolRoamReadNode, ToolRoamAddTags, ToolRoamLinkNodes,
	}
}

// KnownTool reports whether name is a tool of the contract.
func KnownTool(name string) bool {
	for _, t := range Tools() {
		if t == name {
			return true
		}
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
	if err := dec.Decode(&c); err != nil {
		return Call{}, fmt.Errorf("%w: %v", ErrInvalidCall, err)
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
		return fmt.Errorf("decode args: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("decode args: trailing data")
	}
	return nil
}
