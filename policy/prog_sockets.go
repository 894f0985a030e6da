package policy

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Unix sockets named in a command's arguments are decided before it runs
// against the network section's unix: entries (network_sockets.go):
// curl's --unix-socket, the operand of nc -U (ncat --unixsock), socat's
// UNIX-CONNECT:, UNIX-CLIENT:, UNIX-SENDTO:, UNIX: and GOPEN: addresses and
// a bare path address, and the local socket of ssh -R (prog_network.go). Under every mode of network, `any`
// included: no host socket is reachable that the scope does not name. A
// socket known only at run time, a relative one under a working directory
// known only at run time, and every socket a program opens on its own are
// left to the private view.

// socketArgs checks the unix sockets p's arguments name.
func (c *checker) socketArgs(p *parsed, cwd string) {
	switch p.prog {
	case "curl":
		for _, v := range p.values("--unix-socket") {
			c.socket(v, cwd, "curl connects to")
		}
	case "nc", "ncat", "netcat":
		if pos, unixSocket, ok := ncScan(p.args, func(arg) {}); ok && unixSocket && len(pos) > 0 {
			c.socket(pos[0], cwd, p.prog+" connects to")
		}
	case "socat":
		for _, a := range p.args {
			path, always := socatSocket(a)
			if path == "" || !always && !c.isSocket(path, cwd) {
				continue
			}
			c.socket(arg{s: path, known: true}, cwd, "socat connects to")
		}
	}
}

// socatSocket returns the path of a socat address that connects to a unix
// socket (always), or that does when a socket is there: GOPEN and a bare
// path open a file or connect to the socket at that path.
func socatSocket(a arg) (path string, always bool) {
	if !a.known || strings.HasPrefix(a.s, "-") {
		return "", false
	}
	spec, _, _ := strings.Cut(a.s, ",")
	kind, path, ok := strings.Cut(spec, ":")
	if !ok {
		if strings.Contains(spec, "/") {
			return spec, false
		}
		return "", false
	}
	switch strings.ToUpper(kind) {
	case "UNIX-CONNECT", "UNIX-CLIENT", "UNIX-SENDTO", "UNIX", "LOCAL":
		return path, true
	case "GOPEN":
		return path, false
	}
	return "", false
}

// isSocket reports whether the path, relative to cwd, is a unix socket
// now (links followed).
func (c *checker) isSocket(path, cwd string) bool {
	abs, err := absPath(path, cwd, c.env)
	if err != nil || !filepath.IsAbs(abs) {
		return false
	}
	fi, err := c.env.fs().Stat(filepath.Clean(abs))
	return err == nil && fi.Mode().Type() == fs.ModeSocket
}

// socket refuses a connection to the unix socket v, relative to cwd,
// unless an entry of network names it: the path as written (cleaned) or
// where its links lead.
func (c *checker) socket(v arg, cwd, what string) {
	if !v.known || v.s == "" {
		return
	}
	if !filepath.IsAbs(v.s) && !strings.HasPrefix(v.s, "~") && cwd == "" {
		return
	}
	abs, err := absPath(v.s, cwd, c.env)
	if err != nil {
		c.add(Violation{Reason: ReasonInvalidArguments, Resource: v.s, Message: fmt.Sprintf("%s the unix socket %s: %v", what, quoteArg(v.s), err)})
		return
	}
	clean := filepath.Clean(abs)
	n := c.s.net
	if ok, _ := n.AllowSocket(clean); ok {
		return
	}
	fsys := c.env.fs()
	resolved, err := canonicalize(abs, fsys)
	named := func(paths []string) bool {
		for _, p := range paths {
			if p == clean {
				return true
			}
			if r, rerr := canonicalize(p, fsys); err == nil && rerr == nil && r == resolved {
				return true
			}
		}
		return false
	}
	if named(n.Sockets()) {
		return
	}
	if n.ceiling != nil && !named(n.ceiling.ownSockets()) {
		c.add(Violation{Reason: ReasonManaged, Resource: SocketEntry(clean), Rule: RuleManagedNetwork,
			Message: fmt.Sprintf("%s the unix socket %s, which is beyond %s of the machine's managed policy; no scope change can allow it", what, quoteArg(clean), RuleManagedNetwork)})
		return
	}
	viol := Violation{Reason: ReasonHostNotInScope, Resource: SocketEntry(clean), Rule: ruleNetwork}
	if ValidateSocketPath(clean) != nil {
		viol.Message = fmt.Sprintf("%s the unix socket %s, which no entry of network can name", what, quoteArg(clean))
		c.add(viol)
		return
	}
	w := Widening{Flag: WidenSocket, Value: clean}
	viol.Widen = []Widening{w}
	viol.Message = fmt.Sprintf("%s the unix socket %s, which is not in network of this session's scope (no host socket is reachable that it does not name); the user can allow it with: %s", what, quoteArg(clean), ExpandHint(w))
	c.add(viol)
}
