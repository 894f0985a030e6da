package roam

import (
	"errors"
	"fmt"
)

// ErrNotFound is returned when no node has the requested ID.
var ErrNotFound = errors.New("roam node not found")

// ErrInvalid is matched (errors.Is) by every [InvalidError].
var ErrInvalid = errors.New("invalid roam argument")

// InvalidError reports an argument that cannot be used: a title with a line
// break, a subdirectory leaving the roam directory, a malformed tag or ID.
type InvalidError struct {
	// Arg is the argument's name as in the tool call: title, subdirectory, tags, node_id.
	Arg string
	// Value is the offending value (one tag for tags).
	Value string
	// Reason says briefly what is wrong with it.
	Reason string
}

// Error implements error.
func (e *InvalidError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Arg, e.Value, e.Reason)
}

// Unwrap lets errors.Is(err, ErrInvalid) match.
func (e *InvalidError) Unwrap() error { return ErrInvalid }
