package policy

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"unicode/utf8"
)

// CheckWalked decides one access to an entry that a directory walk met
// (the grep and glob tools), as CheckPath decides it, without asking the
// filesystem again: abs is the entry's absolute, clean path as the call
// spells it, resolved the path it really has. A walk knows both, since it
// follows no symbolic link and knows where the directory it lists
// resolves to. dir says whether the entry is a directory; links is a
// regular file's link count, or 0 when the caller has not read it (then
// the hard-link rule is the caller's to apply).
func (s *Scope) CheckWalked(abs, resolved string, dir bool, links uint64, access Access, env Env) []Violation {
	if !utf8.ValidString(abs) {
		// What CheckPath says of such a path (absPath).
		return []Violation{{Reason: ReasonInvalidArguments, Resource: abs, Message: "path " + quoteArg(abs) + ": path is not valid UTF-8"}}
	}
	var info fs.FileInfo
	switch {
	case dir:
		info = statInfo{name: filepath.Base(resolved), st: syscall.Stat_t{Mode: syscall.S_IFDIR}}
	case links > 0:
		info = statInfo{name: filepath.Base(resolved), st: syscall.Stat_t{Mode: syscall.S_IFREG, Nlink: links}}
	}
	// No information otherwise: the widening proposed is the file itself,
	// as for any file that is not a directory.
	return s.checkCanonical(abs, resolved, info, access, env, pathSource{})
}
