package policy

// Access is the kind of file access a path check is for.
type Access int

// The kinds of access.
const (
	AccessRead Access = iota
	AccessWrite
)

// CheckPath decides one file access at run time (exec's open handler, the
// file tools): the same rules the static decision applies to paths.
// A nil result means allowed.
func (s *Scope) CheckPath(path string, access Access, cwd string, env Env) []Violation {
	return managedFirst(s.checkPath(path, access, cwd, env, pathSource{}))
}

// CheckExec decides one fully expanded argv at run time (exec's call and exec
// handlers): the same rules the static decision applies to each simple
// command, with every word now known. A nil result means allowed.
func (s *Scope) CheckExec(argv []string, cwd string, env Env) []Violation {
	return managedFirst(s.checkArgv(argv, cwd, env))
}

// Roots returns the canonical directories below which the scope grants reads
// and writes: the literal prefixes of the read (plus write) and write
// patterns. Landlock and os.Root are opened at these.
func (s *Scope) Roots() (read, write []string) {
	return append([]string(nil), s.readRoots...), append([]string(nil), s.writeRoots...)
}
