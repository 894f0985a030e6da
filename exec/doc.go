// Package exec runs tool calls that policy has already allowed, so that what
// really happens cannot differ from what was decided.
//
// File tools act through an [os.Root] opened at the scope root that holds
// the target, so a symlink swapped in after the decision cannot lead outside
// it. Shell commands run in the mvdan.cc/sh interpreter, whose handlers
// re-check every expanded argv, every cd target and every redirect with a
// [Checker] right before they happen; each program it launches starts
// through a re-exec of the scopegate binary (see [IsHelper], [RunHelper])
// that applies Landlock, in its own process group, with a scrubbed
// environment and a private temporary directory. Where the host allows,
// that helper first enters new user, mount, PID and IPC namespaces and
// builds a private view: denied files, host secrets and host sockets
// masked, a private /tmp, /run and /proc. Files named helper*.go,
// view_helper.go, sockets_helper.go and seccomp.go run in the helper, the
// others in the gateway; helper_protocol.go is all the two share.
package exec
