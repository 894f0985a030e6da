// Package learn turns the audited denials of a branch into the narrowest
// scope widening that would allow them: the pure part of `scopegate scope
// suggest` (docs/learning.md). It reads audit entries, never files, and proposes
// `scope expand` flags; the gateway applies them.
package learn
