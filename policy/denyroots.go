package policy

// DenyPatterns returns the compiled paths.deny globs: absolute doublestar
// patterns (as written and with their literal prefix canonicalized) or
// patterns starting with "**", in lower case since deny ignores case.
// exec masks what they match in a confined program's view.
func (s *Scope) DenyPatterns() []string {
	var out []string
	for _, g := range s.deny {
		out = append(out, g.patterns...)
	}
	return out
}
