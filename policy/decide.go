package policy

import (
	"cmp"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Decide decides one call. It never fails: unknown tools, ill-typed args and
// unsafe paths are denials.
func (s *Scope) Decide(call Call, env Env) Decision {
	d := s.decideCall(call, env)
	d.Execution = env.execution()
	return d
}

func (s *Scope) decideCall(call Call, env Env) Decision {
	if !KnownTool(call.Tool) {
		return Deny(call.Tool, Violation{Reason: ReasonUnknownTool, Resource: call.Tool,
			Message: fmt.Sprintf("unknown tool %s; known tools: %s", quoteArg(call.Tool), strings.Join(Tools(), ", "))})
	}
	var notes []string
	env.notes = &notes
	vs, err := s.decideSafely(call, env)
	if err != nil {
		return Deny(call.Tool, Violation{Reason: ReasonParseError, Resource: call.Tool,
			Message: "the call could not be checked (" + err.Error() + "); it is denied"})
	}
	if len(vs) == 0 {
		d := Allow(call.Tool)
		for _, n := range notes {
			d.Message += "; " + OneLine(n)
		}
		return d
	}
	return Deny(call.Tool, managedFirst(vs)...)
}

// decideSafely turns a panic of the checker into an error, so that a bug
// denies the call instead of failing open or crashing the gateway.
func (s *Scope) decideSafely(call Call, env Env) (vs []Violation, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	return s.decide(call, env), nil
}

// DenyInvalidScope is the decision for every call on a branch whose scope
// cannot be used.
func DenyInvalidScope(tool string, err error) Decision {
	return Deny(tool, Violation{Reason: ReasonScopeInvalid, Rule: "scope.yml",
		Message: "this session's scope is invalid, so every call is denied until the user fixes it: " + err.Error()})
}

// invalidArgs is the violation of arguments that do not decode.
func invalidArgs(tool string, err error) []Violation {
	return []Violation{{Reason: ReasonInvalidArguments, Resource: tool,
		Message: fmt.Sprintf("invalid arguments for %s: %v", tool, err)}}
}

// missing is the violation of a required argument left out.
func missing(tool, field string) []Violation {
	return []Violation{{Reason: ReasonInvalidArguments, Resource: tool,
		Message: fmt.Sprintf("invalid arguments for %s: %q is required", tool, field)}}
}

// callCwd returns the absolute working directory of a call, checked for read
// when it is needed (needed reports whether relative paths depend on it).
func (s *Scope) callCwd(call Call, env Env, needed bool) (string, []Violation) {
	cwd := call.Cwd
	if cwd == "" {
		cwd = env.Cwd
	}
	if cwd == "" {
		if needed {
			return "", []Violation{{Reason: ReasonInvalidArguments, Resource: "cwd",
				Message: "a relative path needs a working directory: give \"cwd\" or create the session with a project root"}}
		}
		return "", nil
	}
	if !strings.HasPrefix(cwd, "/") {
		return "", []Violation{{Reason: ReasonInvalidArguments, Resource: cwd, Message: "cwd must be an absolute path"}}
	}
	abs, err := absPath(cwd, "/", env)
	if err != nil {
		return "", []Violation{{Reason: ReasonInvalidArguments, Resource: cwd, Message: "cwd: " + err.Error()}}
	}
	if needed {
		// The process works in the directory the kernel resolves.
		real, vs := s.checkResolved(abs, AccessRead, env, pathSource{what: "working directory"})
		if vs != nil {
			return "", vs
		}
		return real, nil
	}
	if real, err := canonicalize(abs, env.fs()); err == nil {
		return real, nil
	}
	return filepath.Clean(abs), nil
}

// filePath checks the path argument of a file tool.
func (s *Scope) filePath(tool, p string, access Access, call Call, env Env) []Violation {
	if p == "" {
		return missing(tool, "path")
	}
	relative := !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~")
	if relative {
		if vs, ok := s.relativeNoSymlinks(p, access, call, env); ok {
			return vs
		}
	}
	cwd, vs := s.callCwd(call, env, relative)
	if vs != nil {
		return vs
	}
	return s.checkPath(p, access, cwd, env, pathSource{})
}

// relativeNoSymlinks decides a relative path of a file tool in one step
// when the filesystem can tell that cwd/p exists with no symbolic link on
// the way (see noSymlinkResolver). Then the kernel walked every component of
// the working directory as a directory and found no link, so the cleaned
// spellings of both are canonical and the working directory needs no walk
// of its own. ok is false when this does not apply; the caller then takes
// the general path, which gives the same answer.
func (s *Scope) relativeNoSymlinks(p string, access Access, call Call, env Env) ([]Violation, bool) {
	r, isResolver := env.fs().(noSymlinkResolver)
	cwd := cmp.Or(call.Cwd, env.Cwd)
	if !isResolver || !strings.HasPrefix(cwd, "/") {
		return nil, false
	}
	if _, err := absPath(cwd, "/", env); err != nil {
		return nil, false
	}
	abs, err := absPath(p, cwd, env)
	if err != nil {
		return nil, false
	}
	clean, info, err := r.resolveNoSymlinks(abs)
	if err != nil {
		return nil, false
	}
	dir := filepath.Clean(cwd)
	if vs := s.checkCanonical(dir, dir, nil, AccessRead, env, pathSource{what: "working directory"}); vs != nil {
		return vs, true
	}
	return s.checkCanonical(filepath.Clean(abs), clean, info, access, env, pathSource{}), true
}

// decide returns every violation of a call.
func (s *Scope) decide(call Call, env Env) []Violation {
	switch call.Tool {
	case ToolReadFile:
		var a ReadFileArgs
		if err := DecodeArgs(call.Args, &a); err != nil {
			return invalidArgs(call.Tool, err)
		}
		if (a.Offset != nil && *a.Offset < 0) || (a.Limit != nil && *a.Limit < 0) {
			return invalidArgs(call.Tool, fmt.Errorf("offset and limit must not be negative"))
		}
		return s.filePath(call.Tool, a.Path, AccessRead, call, env)
	case ToolWriteFile:
		var a WriteFileArgs
		if err := DecodeArgs(call.Args, &a); err != nil {
			return invalidArgs(call.Tool, err)
		}
		if a.Content == nil {
			return missing(call.Tool, "content")
		}
		return s.filePath(call.Tool, a.Path, AccessWrite, call, env)
	case ToolEditFile:
		var a EditFileArgs
		if err := DecodeArgs(call.Args, &a); err != nil {
			return invalidArgs(call.Tool, err)
		}
		if a.OldString == nil {
			return missing(call.Tool, "old_string")
		}
		if a.NewString == nil {
			return missing(call.Tool, "new_string")
		}
		return s.filePath(call.Tool, a.Path, AccessWrite, call, env)
	case ToolListDir:
		var a ListDirArgs
		if err := DecodeArgs(call.Args, &a); err != nil {
			return invalidArgs(call.Tool, err)
		}
		return s.filePath(call.Tool, a.Path, AccessRead, call, env)
	case ToolGlob:
		var a GlobArgs
		if err := DecodeArgs(call.Args, &a); err != nil {
			return invalidArgs(call.Tool, err)
		}
		return s.searchRoot(call, a.Pattern, a.Path, env)
	case ToolGrep:
		var a GrepArgs
		if err := DecodeArgs(call.Args, &a); err != nil {
			return invalidArgs(call.Tool, err)
		}
		if a.Include != "" {
			if vs := relativeGlob(call.Tool, "include", a.Include); vs != nil {
				return vs
			}
		}
		if a.Pattern == "" {
			return missing(call.Tool, "pattern")
		}
		p := a.Path
		if p == "" {
			p = "."
		}
		if vs := s.filePath(call.Tool, p, AccessRead, call, env); vs != nil || env.execution() == ExecutionConfined {
			return vs // scopegate's own search skips denied files
		}
		// The caller's own search tool reads every file below, links
		// followed: no denied file may lie there.
		cwd, vs := s.callCwd(call, env, false)
		if vs != nil {
			return vs
		}
		c := newChecker(s, env)
		o := walkOpts{hidden: true, follow: true, rooted: true}
		if a.Include != "" {
			o.filters = []walkFilter{{glob: a.Include, include: true, files: true}}
		}
		c.recursiveRead(&parsed{prog: ToolGrep}, p, cwd, o)
		return c.vs
	case ToolShell:
		var a ShellArgs
		if err := DecodeArgs(call.Args, &a); err != nil {
			return invalidArgs(call.Tool, err)
		}
		if strings.TrimSpace(a.Command) == "" {
			return missing(call.Tool, "command")
		}
		if a.TimeoutMS != nil && *a.TimeoutMS <= 0 {
			return invalidArgs(call.Tool, fmt.Errorf("timeout_ms must be positive"))
		}
		cwd, vs := s.callCwd(call, env, true)
		if vs != nil {
			return vs
		}
		return s.checkShell(a.Command, cwd, env)
	default:
		return s.decideRoam(call, env)
	}
}

// searchRoot checks glob's pattern and root: the root is read; the pattern
// must stay below it.
func (s *Scope) searchRoot(call Call, pattern, root string, env Env) []Violation {
	if pattern == "" {
		return missing(call.Tool, "pattern")
	}
	if vs := relativeGlob(call.Tool, "pattern", pattern); vs != nil {
		return vs
	}
	if root == "" {
		root = "."
	}
	return s.filePath(call.Tool, root, AccessRead, call, env)
}

// relativeGlob requires a search glob to be relative and free of "..", so
// that every match stays below the checked root.
func relativeGlob(tool, field, g string) []Violation {
	if strings.HasPrefix(g, "/") || strings.HasPrefix(g, "~") {
		return invalidArgs(tool, fmt.Errorf("%s must be relative to path; put the directory in \"path\"", field))
	}
	for _, seg := range strings.Split(g, "/") {
		if seg == ".." {
			return invalidArgs(tool, fmt.Errorf("%s must not contain \"..\"", field))
		}
	}
	if !doublestar.ValidatePattern(g) {
		return invalidArgs(tool, fmt.Errorf("%s is not a valid glob", field))
	}
	return nil
}

// decideRoam checks a call of one of the org-roam tools.
func (s *Scope) decideRoam(call Call, env Env) []Violation {
	_ = env
	switch call.Tool {
	case ToolRoamCreateNode:
		var a RoamCreateNodeArgs
		if err := DecodeArgs(call.Args, &a); err != nil {
			return invalidArgs(call.Tool, err)
		}
		if strings.TrimSpace(a.Title) == "" {
			return missing(call.Tool, "title")
		}
		vs := s.roamSubdir(a.Subdirectory)
		return append(vs, s.roamTags(a.Tags)...)
	case ToolRoamReadNode:
		var a RoamReadNodeArgs
		if err := DecodeArgs(call.Args, &a); err != nil {
			return invalidArgs(call.Tool, err)
		}
		return s.roamNodes(call.Tool, a.NodeID)
	case ToolRoamAddTags:
		var a RoamAddTagsArgs
		if err := DecodeArgs(call.Args, &a); err != nil {
			return invalidArgs(call.Tool, err)
		}
		if len(a.Tags) == 0 {
			return missing(call.Tool, "tags")
		}
		return append(s.roamNodes(call.Tool, a.NodeID), s.roamTags(a.Tags)...)
	case ToolRoamLinkNodes:
		var a RoamLinkNodesArgs
		if err := DecodeArgs(call.Args, &a); err != nil {
			return invalidArgs(call.Tool, err)
		}
		return s.roamNodes(call.Tool, a.SourceID, a.TargetID)
	}
	return nil
}

// roamSubdir checks a roam subdirectory against the scope's patterns.
func (s *Scope) roamSubdir(sub string) []Violation {
	clean := path.Clean("/" + sub)[1:]
	if strings.ContainsRune(sub, 0) || strings.HasPrefix(sub, "/") || strings.HasPrefix(sub, "~") || containsDotDot(sub) {
		return []Violation{{Reason: ReasonInvalidArguments, Resource: sub,
			Message: "subdirectory must be relative to the org-roam directory, without \"..\""}}
	}
	for i, p := range s.roam.Subdirectory {
		if ok, _ := doublestar.Match(p, clean); ok {
			return nil
		}
		_ = i
	}
	w := Widening{Flag: WidenRoamSubdirectory, Value: clean + "/**"}
	return []Violation{{Reason: ReasonRoamNotInScope, Resource: clean, Rule: "org_roam_patterns.subdirectory", Widen: []Widening{w},
		Message: fmt.Sprintf("org-roam subdirectory %s is not in org_roam_patterns.subdirectory of this session's scope; the user can widen it with: %s", quoteArg(clean), ExpandHint(w))}}
}

// containsDotDot reports whether a slash-separated path has a .. element.
func containsDotDot(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// roamTags checks tags against the scope's allowed tags.
func (s *Scope) roamTags(tags []string) []Violation {
	var vs []Violation
	for _, t := range tags {
		if t == "" || strings.ContainsAny(t, " \t\n:") {
			vs = append(vs, Violation{Reason: ReasonInvalidArguments, Resource: t, Message: fmt.Sprintf("tag %s must be a single word without ':'", quoteArg(t))})
			continue
		}
		if !listed(s.roam.Tags, t) {
			w := Widening{Flag: WidenRoamTag, Value: t}
			vs = append(vs, Violation{Reason: ReasonRoamNotInScope, Resource: t, Rule: "org_roam_patterns.tags", Widen: []Widening{w},
				Message: fmt.Sprintf("tag %s is not in org_roam_patterns.tags of this session's scope; the user can widen it with: %s", quoteArg(t), ExpandHint(w))})
		}
	}
	return vs
}

// roamNodes checks node ids against the scope's node patterns.
func (s *Scope) roamNodes(tool string, ids ...string) []Violation {
	var vs []Violation
	for _, id := range ids {
		if id == "" {
			return missing(tool, "node_id")
		}
		if !listed(s.roam.NodeIDs, id) {
			w := Widening{Flag: WidenRoamNodeID, Value: id}
			vs = append(vs, Violation{Reason: ReasonRoamNotInScope, Resource: id, Rule: "org_roam_patterns.node_ids", Widen: []Widening{w},
				Message: fmt.Sprintf("org-roam node %s is not in org_roam_patterns.node_ids of this session's scope; the user can widen it with: %s", quoteArg(id), ExpandHint(w))})
		}
	}
	return vs
}

// listed reports whether v is in list, where "*" stands for everything.
func listed(list []string, v string) bool {
	for _, x := range list {
		if x == "*" || x == v {
			return true
		}
	}
	return false
}
