package policy

import (
	"strconv"
	"strings"
)

// ssh's forwardings (ssh(1) -L, -R, -D, -W; ssh_config(5) LocalForward,
// RemoteForward, DynamicForward). Only what makes this machine connect, or
// names the host the session's stream goes to, is a destination:
//
//   - -R and RemoteForward: when the remote side's listener is used, the
//     local ssh connects to host:hostport (checked), or to a local Unix
//     socket (checked as a path written to, sshExtra). Without a
//     destination the local ssh is a SOCKS proxy for the remote side and
//     connects anywhere: only network: any allows it.
//   - -W host:port: the stream of ssh's standard input and output goes to
//     host:port, as the destination behind a -J jump host does (checked).
//   - -L, LocalForward, -D and DynamicForward: the remote side connects,
//     to a host it resolves itself; this machine connects only to the ssh
//     server, which network already decides (not checked).

// sshFwdField is one field of a forwarding: a host, a port, or a Unix
// socket path (a field holding '/').
type sshFwdField struct {
	s    string
	path bool
}

// sshForwardFields splits a forwarding as ssh's parse_forward does: up to
// four fields separated by colons, a field in brackets taken whole (an
// IPv6 address), a backslash taking the next character literally. ok is
// false for what ssh refuses, and for ${VAR}, which ssh expands from its
// environment at run time.
func sshForwardFields(v string) (fs []sshFwdField, ok bool) {
	if strings.Contains(v, "${") {
		return nil, false
	}
	cp := strings.TrimLeft(v, " \t\n\v\f\r")
	for len(fs) < 4 && cp != "" {
		if cp[0] == '[' {
			end := strings.IndexByte(cp, ']')
			if end < 0 {
				return nil, false
			}
			rest := cp[end+1:]
			if rest != "" && rest[0] != ':' {
				return nil, false
			}
			fs = append(fs, sshFwdField{s: cp[1:end], path: strings.Contains(cp[1:end], "/")})
			cp = strings.TrimPrefix(rest, ":")
			continue
		}
		var f sshFwdField
		var b strings.Builder
		i := 0
	field:
		for ; i < len(cp); i++ {
			switch cp[i] {
			case '\\':
				if i+1 == len(cp) {
					return nil, false
				}
				i++
				b.WriteByte(cp[i])
			case ':':
				i++
				break field
			case '/':
				f.path = true
				b.WriteByte('/')
			default:
				b.WriteByte(cp[i])
			}
		}
		f.s = b.String()
		fs = append(fs, f)
		cp = cp[i:]
	}
	if cp != "" {
		return nil, false // a fifth field
	}
	return fs, len(fs) > 0
}

// sshRemoteTargets reads ssh -R: [bind:]port:host:hostport,
// remote_socket:host:hostport, [bind:]port:local_socket,
// remote_socket:local_socket, or [bind:]port (a SOCKS proxy: anyDest).
// A local socket names no host.
func sshRemoteTargets(v string) ([]target, bool) {
	fs, ok := sshForwardFields(v)
	if !ok {
		return nil, false
	}
	var host, port string
	switch len(fs) {
	case 1:
		return []target{{anyDest, 0}}, true
	case 2:
		if fs[1].path {
			return nil, true
		}
		return []target{{anyDest, 0}}, true
	case 3:
		if !fs[0].path && fs[2].path {
			return nil, true
		}
		host, port = fs[1].s, fs[2].s
	case 4:
		host, port = fs[2].s, fs[3].s
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return nil, false // ssh also reads service names: refused
	}
	return []target{{host, n}}, true
}

// sshStdioTargets reads ssh -W host:port, or a Unix socket path on the
// remote side, which names no host.
func sshStdioTargets(v string) ([]target, bool) {
	fs, ok := sshForwardFields(v)
	switch {
	case !ok:
		return nil, false
	case len(fs) == 1 && fs[0].path:
		return nil, true
	case len(fs) != 2 || fs[0].path || fs[1].path:
		return nil, false
	}
	n, err := strconv.Atoi(fs[1].s)
	if err != nil || n < 1 || n > 65535 {
		return nil, false
	}
	return []target{{fs[0].s, n}}, true
}

// sshLocalSocket is the local Unix socket an ssh -R forwarding makes the
// local ssh connect to, if any.
func sshLocalSocket(v string) (string, bool) {
	fs, ok := sshForwardFields(v)
	if !ok {
		return "", false
	}
	last := fs[len(fs)-1]
	if (len(fs) == 2 || len(fs) == 3 && !fs[0].path) && last.path {
		return last.s, true
	}
	return "", false
}

// sshConfigArgs splits the arguments of an ssh_config keyword as ssh's
// argv_split does: on blanks, with double or single quotes grouping and a
// backslash escaping a quote, a blank or a backslash; an argument starting
// with '#' begins a comment. ok is false for an unterminated quote.
func sshConfigArgs(v string) (args []string, ok bool) {
	var b strings.Builder
	in := false
	var quote byte
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v) && strings.IndexByte("\\\"' ", v[i+1]) >= 0:
			i++
			b.WriteByte(v[i])
			in = true
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			b.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				args = append(args, b.String())
				b.Reset()
				in = false
			}
		case c == '#' && !in:
			return args, true
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, false
	}
	if in {
		args = append(args, b.String())
	}
	return args, true
}

// sshRemoteForwardSpec turns the arguments of -o RemoteForward (listen
// [destination]) into the spec -R reads.
func sshRemoteForwardSpec(v string) (string, bool) {
	args, ok := sshConfigArgs(v)
	switch {
	case !ok || len(args) == 0 || len(args) > 2:
		return "", false
	case len(args) == 1:
		return args[0], true
	}
	return args[0] + ":" + args[1], true
}

// sshForwardOptions checks the -o RemoteForward options of ssh, scp and
// sftp as -R is checked. (scp and sftp clear forwardings; they are
// checked all the same.)
func (c *checker) sshForwardOptions(p *parsed) {
	what := p.prog + " -o RemoteForward connects to"
	for _, v := range sshOptionValues(p, "remoteforward") {
		spec, ok := sshRemoteForwardSpec(v.s)
		if !ok {
			c.host(target{v.s, 0}, what)
			continue
		}
		ts, ok := connTargets(connSSHRemote, spec, nil)
		if !ok {
			c.host(target{spec, 0}, what)
			continue
		}
		c.hosts(ts, what)
	}
}
