// Package policy decides whether one tool call stays inside a session's scope.
//
// It is pure: a compiled [Scope], a [Call] and an [Env] (the filesystem view,
// home directory and protected roots the caller hands in) always give the same
// [Decision]. It has no clock, no globals and no I/O beyond the [FS] it is given.
// A denial is a value, never an error.
package policy
