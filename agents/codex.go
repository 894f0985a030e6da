package agents

import (
	"fmt"
	"strings"

	"github.com/scopegate/scopegate/policy"
)

// mapCodex maps Codex's hooked tools:
//
//	Bash        → shell (tool_input.command)
//	apply_patch → write_file of every file the patch adds, updates,
//	              deletes or moves (tool_input.command holds the patch)
//
// Any other tool (mcp__*, and whatever Codex hooks next) is KindOther. Like
// Claude Code's, the calls are built from the contract's typed args.
func mapCodex(in Input) (Mapping, error) {
	switch in.ToolName {
	case "Bash":
		var a struct {
			Command string `json:"command"`
		}
		if err := fields(in, &a, "command", &a.Command); err != nil {
			return Mapping{}, err
		}
		return one(KindShell, policy.ToolShell, policy.ShellArgs{Command: a.Command})
	case "apply_patch":
		var a struct {
			Command string `json:"command"`
		}
		if err := fields(in, &a, "", nil); err != nil {
			return Mapping{}, err
		}
		paths, err := PatchPaths(a.Command)
		if err != nil {
			return Mapping{}, err
		}
		// The patch's content is Codex's to apply: each file is decided as
		// a write of it.
		m := Mapping{Kind: KindFiles}
		empty := ""
		for _, p := range paths {
			c, err := call(policy.ToolWriteFile, policy.WriteFileArgs{Path: p, Content: &empty})
			if err != nil {
				return Mapping{}, err
			}
			m.Calls = append(m.Calls, c)
		}
		return m, nil
	}
	return Mapping{Kind: KindOther}, nil
}

// The file operations of Codex's patch format.
const (
	patchBegin  = "*** Begin Patch"
	patchEnd    = "*** End Patch"
	patchAdd    = "*** Add File: "
	patchUpdate = "*** Update File: "
	patchDelete = "*** Delete File: "
	patchMove   = "*** Move to: "
	patchEOF    = "*** End of File"
)

// PatchPaths returns every path a Codex patch touches (added, updated,
// deleted, and both ends of a move), in order, each once. The patch must be
// one well-formed envelope: a header line it does not know, a hunk line that
// is not context, addition, removal or a hunk marker, or a patch touching no
// file is an error, so that no write can hide in a line the parser skipped.
func PatchPaths(patch string) ([]string, error) {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(patch, "\r\n", "\n"), "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != patchBegin || strings.TrimSpace(lines[len(lines)-1]) != patchEnd {
		return nil, fmt.Errorf("%w: apply_patch input is not one %q … %q envelope", ErrInvalidInput, patchBegin, patchEnd)
	}
	var paths []string
	seen := map[string]bool{}
	add := func(p string) error {
		if strings.TrimSpace(p) == "" || strings.ContainsRune(p, 0) {
			return fmt.Errorf("%w: apply_patch names an empty or invalid path", ErrInvalidInput)
		}
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
		return nil
	}
	inFile := false
	for i, l := range lines[1 : len(lines)-1] {
		var err error
		switch {
		case strings.HasPrefix(l, patchAdd):
			err, inFile = add(strings.TrimPrefix(l, patchAdd)), true
		case strings.HasPrefix(l, patchUpdate):
			err, inFile = add(strings.TrimPrefix(l, patchUpdate)), true
		case strings.HasPrefix(l, patchDelete):
			err, inFile = add(strings.TrimPrefix(l, patchDelete)), true
		case strings.HasPrefix(l, patchMove):
			if !inFile {
				return nil, fmt.Errorf("%w: apply_patch line %d: a move outside a file", ErrInvalidInput, i+2)
			}
			err = add(strings.TrimPrefix(l, patchMove))
		case strings.HasPrefix(l, "***"):
			if strings.TrimSpace(l) != patchEOF {
				return nil, fmt.Errorf("%w: apply_patch line %d: unknown header %q", ErrInvalidInput, i+2, l)
			}
		case !inFile:
			return nil, fmt.Errorf("%w: apply_patch line %d: content before any file header", ErrInvalidInput, i+2)
		case l == "" || l[0] == ' ' || l[0] == '+' || l[0] == '-' || strings.HasPrefix(l, "@@"):
		default:
			return nil, fmt.Errorf("%w: apply_patch line %d: not a patch line", ErrInvalidInput, i+2)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: apply_patch touches no file", ErrInvalidInput)
	}
	return paths, nil
}
