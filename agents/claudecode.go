package agents

import (
	"fmt"
	"net/url"
	"strconv"
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
//	WebFetch     → KindNetwork: the host and port of its URL
//
// Any other tool (WebSearch, Task, mcp__*) is KindOther. The
// calls are built from the contract's typed args (policy.*Args), so that a
// renamed contract field breaks the build here.
func mapClaudeCode(in Input) (Mapping, error) {
	switch in.ToolName {
	case "Bash":
		var a struct {
			Command string `json:"command"`
			Timeout *int64 `json:"timeout"`
		}
		if err := fields(in, &a, "command", &a.Command); err != nil {
			return Mapping{}, err
		}
		args := policy.ShellArgs{Command: a.Command}
		if a.Timeout != nil && *a.Timeout > 0 {
			args.TimeoutMS = a.Timeout
		}
		return one(KindShell, policy.ToolShell, args)
	case "Read":
		var a struct {
			FilePath string `json:"file_path"`
			Offset   *int   `json:"offset"`
			Limit    *int   `json:"limit"`
		}
		if err := fields(in, &a, "file_path", &a.FilePath); err != nil {
			return Mapping{}, err
		}
		return one(KindFiles, policy.ToolReadFile, policy.ReadFileArgs{Path: a.FilePath, Offset: a.Offset, Limit: a.Limit})
	case "Write":
		var a struct {
			FilePath string `json:"file_path"`
			Content  string `json:"content"`
		}
		if err := fields(in, &a, "file_path", &a.FilePath); err != nil {
			return Mapping{}, err
		}
		return one(KindFiles, policy.ToolWriteFile, policy.WriteFileArgs{Path: a.FilePath, Content: &a.Content})
	case "Edit":
		var a struct {
			FilePath string `json:"file_path"`
			edit
		}
		if err := fields(in, &a, "file_path", &a.FilePath); err != nil {
			return Mapping{}, err
		}
		return one(KindFiles, policy.ToolEditFile, a.edit.args(a.FilePath))
	case "MultiEdit":
		var a struct {
			FilePath string `json:"file_path"`
			Edits    []edit `json:"edits"`
		}
		if err := fields(in, &a, "file_path", &a.FilePath); err != nil {
			return Mapping{}, err
		}
		if len(a.Edits) == 0 {
			return Mapping{}, need(in, "edits", "")
		}
		m := Mapping{Kind: KindFiles}
		for _, e := range a.Edits {
			c, err := call(policy.ToolEditFile, e.args(a.FilePath))
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
		if err := fields(in, &a, "notebook_path", &a.NotebookPath); err != nil {
			return Mapping{}, err
		}
		return one(KindFiles, policy.ToolWriteFile, policy.WriteFileArgs{Path: a.NotebookPath, Content: &a.NewSource})
	case "Glob":
		var a struct {
			Pattern string `json:"pattern"`
			Path    string `json:"path"`
		}
		if err := fields(in, &a, "pattern", &a.Pattern); err != nil {
			return Mapping{}, err
		}
		return one(KindFiles, policy.ToolGlob, policy.GlobArgs{Pattern: a.Pattern, Path: a.Path})
	case "Grep":
		var a struct {
			Pattern string `json:"pattern"`
			Path    string `json:"path"`
			Glob    string `json:"glob"`
		}
		if err := fields(in, &a, "pattern", &a.Pattern); err != nil {
			return Mapping{}, err
		}
		return one(KindFiles, policy.ToolGrep, policy.GrepArgs{Pattern: a.Pattern, Path: a.Path, Include: a.Glob})
	case "WebFetch":
		var a struct {
			URL string `json:"url"`
		}
		if err := fields(in, &a, "url", &a.URL); err != nil {
			return Mapping{}, err
		}
		return fetchMapping(in, a.URL)
	case "LS":
		var a struct {
			Path string `json:"path"`
		}
		if err := fields(in, &a, "path", &a.Path); err != nil {
			return Mapping{}, err
		}
		return one(KindFiles, policy.ToolListDir, policy.ListDirArgs{Path: a.Path})
	}
	if strings.TrimSpace(in.ToolName) != in.ToolName {
		return Mapping{}, need(in, "a tool name without spaces", "")
	}
	return Mapping{Kind: KindOther}, nil
}

// edit is one edit of Claude Code's Edit and MultiEdit.
type edit struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

// args are the edit_file args of e on path.
func (e edit) args(path string) policy.EditFileArgs {
	return policy.EditFileArgs{Path: path, OldString: &e.OldString, NewString: &e.NewString, ReplaceAll: e.ReplaceAll}
}

// fetchMapping maps the URL of a web fetch to the host and port it
// connects to: an absolute http or https URL, the port its scheme implies
// unless one is given. Anything else cannot be decided and is an error.
func fetchMapping(in Input, raw string) (Mapping, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Mapping{}, fmt.Errorf("%w: %s url %q: %v", ErrInvalidInput, in.ToolName, raw, err)
	}
	port := 0
	switch strings.ToLower(u.Scheme) {
	case "https":
		port = 443
	case "http":
		port = 80
	default:
		return Mapping{}, fmt.Errorf("%w: %s url %q is not an http or https URL", ErrInvalidInput, in.ToolName, raw)
	}
	if u.Hostname() == "" {
		return Mapping{}, fmt.Errorf("%w: %s url %q has no host", ErrInvalidInput, in.ToolName, raw)
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Mapping{}, fmt.Errorf("%w: %s url %q has an invalid port", ErrInvalidInput, in.ToolName, raw)
		}
		port = n
	}
	return Mapping{Kind: KindNetwork, URL: raw, Host: u.Hostname(), Port: port}, nil
}
