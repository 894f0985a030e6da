package agents

import (
	"strings"

	"github.com/scopegate/scopegate/policy"
)

// mapClaudeCode maps Claude Code's tools:
//
//	Bash         → shell
//	Read         → read_file
//	Write        → write_file
//	Edit         → edit_file
//	MultiEdit    → edit_file, one per edit
//	NotebookEdit → write_file of the notebook
//	Glob         → glob
//	Grep         → grep
//	LS           → list_dir
//
// Any other tool (WebFetch, WebSearch, Task, mcp__*) is KindOther.
func mapClaudeCode(in Input) (Mapping, error) {
	switch in.ToolName {
	case "Bash":
		var a struct {
			Command string `json:"command"`
			Timeout *int64 `json:"timeout"`
		}
		if err := fields(in, &a); err != nil {
			return Mapping{}, err
		}
		if err := need(in, "command", a.Command); err != nil {
			return Mapping{}, err
		}
		args := map[string]any{"command": a.Command}
		if a.Timeout != nil && *a.Timeout > 0 {
			args["timeout_ms"] = *a.Timeout
		}
		return one(KindShell, policy.ToolShell, args)
	case "Read":
		var a struct {
			FilePath string `json:"file_path"`
			Offset   *int   `json:"offset"`
			Limit    *int   `json:"limit"`
		}
		if err := fields(in, &a); err != nil {
			return Mapping{}, err
		}
		if err := need(in, "file_path", a.FilePath); err != nil {
			return Mapping{}, err
		}
		args := map[string]any{"path": a.FilePath}
		if a.Offset != nil {
			args["offset"] = *a.Offset
		}
		if a.Limit != nil {
			args["limit"] = *a.Limit
		}
		return one(KindFiles, policy.ToolReadFile, args)
	case "Write":
		var a struct {
			FilePath string `json:"file_path"`
			Content  string `json:"content"`
		}
		if err := fields(in, &a); err != nil {
			return Mapping{}, err
		}
		if err := need(in, "file_path", a.FilePath); err != nil {
			return Mapping{}, err
		}
		return one(KindFiles, policy.ToolWriteFile, map[string]any{"path": a.FilePath, "content": a.Content})
	case "Edit":
		var a struct {
			FilePath   string `json:"file_path"`
			OldString  string `json:"old_string"`
			NewString  string `json:"new_string"`
			ReplaceAll bool   `json:"replace_all"`
		}
		if err := fields(in, &a); err != nil {
			return Mapping{}, err
		}
		if err := need(in, "file_path", a.FilePath); err != nil {
			return Mapping{}, err
		}
		return one(KindFiles, policy.ToolEditFile, map[string]any{"path": a.FilePath,
			"old_string": a.OldString, "new_string": a.NewString, "replace_all": a.ReplaceAll})
	case "MultiEdit":
		var a struct {
			FilePath string `json:"file_path"`
			Edits    []struct {
				OldString  string `json:"old_string"`
				NewString  string `json:"new_string"`
				ReplaceAll bool   `json:"replace_all"`
			} `json:"edits"`
		}
		if err := fields(in, &a); err != nil {
			return Mapping{}, err
		}
		if err := need(in, "file_path", a.FilePath); err != nil {
			return Mapping{}, err
		}
		if len(a.Edits) == 0 {
			return Mapping{}, need(in, "edits", "")
		}
		m := Mapping{Kind: KindFiles}
		for _, e := range a.Edits {
			c, err := call(policy.ToolEditFile, map[string]any{"path": a.FilePath,
				"old_string": e.OldString, "new_string": e.NewString, "replace_all": e.ReplaceAll})
			if err != nil {
				return Mapping{}, err
			}
			m.Calls = append(m.Calls, c)
		}
		return m, nil
	case "NotebookEdit":
		var a struct {
			NotebookPath string `json:"notebook_path"`
			NewSource    string `json:"new_source"`
		}
		if err := fields(in, &a); err != nil {
			return Mapping{}, err
		}
		if err := need(in, "notebook_path", a.NotebookPath); err != nil {
			return Mapping{}, err
		}
		return one(KindFiles, policy.ToolWriteFile, map[string]any{"path": a.NotebookPath, "content": a.NewSource})
	case "Glob":
		var a struct {
			Pattern string `json:"pattern"`
			Path    string `json:"path"`
		}
		if err := fields(in, &a); err != nil {
			return Mapping{}, err
		}
		if err := need(in, "pattern", a.Pattern); err != nil {
			return Mapping{}, err
		}
		return one(KindFiles, policy.ToolGlob, optional(map[string]any{"pattern": a.Pattern}, "path", a.Path))
	case "Grep":
		var a struct {
			Pattern string `json:"pattern"`
			Path    string `json:"path"`
			Glob    string `json:"glob"`
		}
		if err := fields(in, &a); err != nil {
			return Mapping{}, err
		}
		if err := need(in, "pattern", a.Pattern); err != nil {
			return Mapping{}, err
		}
		args := optional(map[string]any{"pattern": a.Pattern}, "path", a.Path)
		return one(KindFiles, policy.ToolGrep, optional(args, "include", a.Glob))
	case "LS":
		var a struct {
			Path string `json:"path"`
		}
		if err := fields(in, &a); err != nil {
			return Mapping{}, err
		}
		if err := need(in, "path", a.Path); err != nil {
			return Mapping{}, err
		}
		return one(KindFiles, policy.ToolListDir, map[string]any{"path": a.Path})
	}
	if strings.TrimSpace(in.ToolName) != in.ToolName {
		return Mapping{}, need(in, "a tool name without spaces", "")
	}
	return Mapping{Kind: KindOther}, nil
}

func one(kind Kind, tool string, args map[string]any) (Mapping, error) {
	c, err := call(tool, args)
	if err != nil {
		return Mapping{}, err
	}
	return Mapping{Kind: kind, Calls: []policy.Call{c}}, nil
}

func optional(args map[string]any, key, value string) map[string]any {
	if value != "" {
		args[key] = value
	}
	return args
}
