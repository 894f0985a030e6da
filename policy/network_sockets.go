package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Unix sockets in the network section. A host unix socket is a way to the
// services behind it (the Docker daemon, the D-Bus system bus, an agent's
// socket in $HOME) that no host rule sees, so a confined program reaches
// none but those the list names, whatever network says:
//
//	network:
//	  - unix:/run/docker.sock   # this socket, by its absolute path
//	network: [any, unix:/run/docker.sock]   # every host, and this socket
//
// An entry names one socket: an absolute, clean path, no pattern. A
// command that names a socket before run time (curl --unix-socket, nc -U,
// socat UNIX-CONNECT:) is decided against these entries (prog_sockets.go);
// the private view makes every other host socket unreachable at run time.

// socketPrefix begins an entry that names a unix socket.
const socketPrefix = "unix:"

// maxSocketPath is the longest path a socket address holds (sun_path is
// 108 bytes with its terminating NUL).
const maxSocketPath = 107

// socketEntry is one compiled unix: entry.
type socketEntry struct {
	rule string // e.g. "network[3] unix:/run/docker.sock"
	path string
}

// SocketEntry is the network entry that names the socket at path.
func SocketEntry(path string) string { return socketPrefix + path }

// ValidateSocketPath checks the path of a unix: entry as [Compile] does:
// `scope expand --allow-socket` refuses what a scope would.
func ValidateSocketPath(path string) error {
	_, err := parseSocketEntry(socketPrefix + path)
	return err
}

// parseSocketEntry returns the path a unix: entry names.
func parseSocketEntry(s string) (string, error) {
	p, ok := strings.CutPrefix(s, socketPrefix)
	switch {
	case !ok:
		return "", errors.New("a unix socket entry begins with unix:/")
	case p == "":
		return "", errors.New("unix: names no socket: write unix:/ABSOLUTE/PATH")
	case !strings.HasPrefix(p, "/"):
		return "", errors.New("a unix socket is named by its absolute path (unix:/run/app.sock)")
	case strings.IndexFunc(p, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0:
		return "", errors.New("the path contains a control character")
	case strings.ContainsAny(p, "*?[{"):
		return "", errors.New("an entry names one socket, not a pattern")
	case filepath.Clean(p) != p || p == "/":
		return "", fmt.Errorf("the path is not clean (write %s)", filepath.Clean(p))
	case len(p) > maxSocketPath:
		return "", fmt.Errorf("the path is longer than a socket address holds (%d bytes)", maxSocketPath)
	}
	return p, nil
}

// ownSockets returns the paths of the unix sockets the section names, in
// the order written, without its ceiling (see Sockets).
func (n Network) ownSockets() []string {
	out := make([]string, len(n.sockets))
	for i, s := range n.sockets {
		out[i] = s.path
	}
	return out
}

// ownAllowSocket decides a connection to the unix socket at path
// (absolute, clean) by the section alone (see AllowSocket): allowed when
// an entry names it. rule is that entry, or "network".
func (n Network) ownAllowSocket(path string) (allowed bool, rule string) {
	for _, s := range n.sockets {
		if s.path == path {
			return true, s.rule
		}
	}
	return false, ruleNetwork
}
