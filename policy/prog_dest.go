package policy

import (
	"strconv"
	"strings"
)

// Options whose value names where a program connects, besides its URL
// operands: a proxy, a name server, the address a request is sent to
// instead of its host. A table row marks them with dest and a connKind
// saying how the program reads the value (curl(1), wget(1)); optionHosts
// checks every host they name. A value that names no host it can read is
// refused: the program may still connect somewhere.

// connKind is how an option's value names where the program connects.
type connKind uint8

const (
	connNone        connKind = iota
	connRequest              // a URL requested like an operand; no scheme means http (curl --url, wget --base)
	connHTTPS                // a URL; no scheme means https (curl --doh-url)
	connProxy                // curl's [scheme://][user[:password]@]host[:port][/path]: port 1080, 443 for https://
	connNameServers          // addr[:port][,addr[:port]]…: port 53 (curl --dns-servers)
	connConnectTo            // curl's HOST1:PORT1:HOST2:PORT2, an empty HOST2 or PORT2 the request's own
	connResolve              // curl's [+]HOST:PORT:ADDR[,ADDR]…: ADDR at PORT; -HOST:PORT removes an entry
	connWgetrc               // a wgetrc command (wget -e): http_proxy, https_proxy, ftp_proxy, base
	connSSHRemote            // ssh -R [bind:]port:host:hostport: this machine connects to host:hostport; [bind:]port alone makes a SOCKS proxy
	connSSHStdio             // ssh -W host:port: the session's stream goes to host:port
)

// anyDest is the host of a target that stands for every host: ssh -R
// without a destination makes the local ssh a SOCKS proxy that connects
// wherever the remote side asks. Only network: any allows it.
const anyDest = "*"

// optionHosts checks the hosts named by the options of p marked dest.
func (c *checker) optionHosts(p *parsed) {
	var reqs []target // the requests of the command, for --connect-to
	for _, o := range p.occ {
		if o.opt != nil && o.opt.conn == connRequest && o.has && o.value.known {
			if t, ok := urlTarget(o.value.s, "http"); ok {
				reqs = append(reqs, t)
			}
		}
	}
	for _, a := range p.operands() {
		if a.known && p.prog == "curl" {
			if t, ok := urlTarget(a.s, "http"); ok {
				reqs = append(reqs, t)
			}
		}
	}
	for _, o := range p.occ {
		if o.opt == nil || o.opt.conn == connNone || !o.has || !o.value.known {
			continue // a value known only at run time is decided when the program connects
		}
		what := p.prog + " " + longName(o.opt) + " connects to"
		ts, ok := connTargets(o.opt.conn, o.value.s, reqs)
		if !ok {
			c.host(target{o.value.s, 0}, what)
			continue
		}
		c.hosts(ts, what)
	}
}

// longName is the name an option is shown by: its first long name.
func longName(o *option) string {
	for _, n := range o.names {
		if strings.HasPrefix(n, "--") {
			return n
		}
	}
	return o.names[0]
}

// connTargets returns the hosts and ports a value of kind k makes the
// program connect to; reqs are the command's requests (for an empty
// field of --connect-to). ok is false when the value cannot be read, or
// names an empty host or a port out of range.
func connTargets(k connKind, v string, reqs []target) ([]target, bool) {
	ts, ok := readConnValue(k, v, reqs)
	for _, t := range ts {
		if t.host == "" || t.port < 0 || t.port > 65535 {
			return nil, false
		}
	}
	return ts, ok
}

// readConnValue reads a value of kind k (see connTargets).
func readConnValue(k connKind, v string, reqs []target) (ts []target, ok bool) {
	switch k {
	case connRequest, connHTTPS:
		def := "http"
		if k == connHTTPS {
			def = "https"
		}
		if v == "" {
			return nil, k == connHTTPS // --doh-url "" unsets it
		}
		t, ok := urlTarget(v, def)
		return []target{t}, ok
	case connProxy:
		if v == "" {
			return nil, true // no proxy
		}
		def := 1080
		if scheme, _, _ := splitScheme(v); scheme == "https" {
			def = 443
		}
		t, ok := proxyTarget(v, def)
		return []target{t}, ok
	case connNameServers:
		for _, s := range strings.Split(v, ",") {
			h, port, ok := hostPort(strings.TrimSpace(s), 53)
			if !ok {
				return nil, false
			}
			ts = append(ts, target{h, port})
		}
		return ts, true
	case connConnectTo:
		return connectToTargets(v, reqs)
	case connResolve:
		return resolveTargets(v)
	case connWgetrc:
		return wgetrcTargets(v)
	case connSSHRemote:
		return sshRemoteTargets(v)
	case connSSHStdio:
		return sshStdioTargets(v)
	}
	return nil, true
}

// connectToTargets reads curl's --connect-to HOST1:PORT1:HOST2:PORT2:
// a request to HOST1:PORT1 connects to HOST2:PORT2 instead; an empty
// HOST1 or PORT1 matches any, an empty HOST2 or PORT2 keeps the request's.
// A redirect (-L) may reach HOST1:PORT1 too, so HOST2:PORT2 is checked
// whether or not a request names HOST1.
func connectToTargets(v string, reqs []target) ([]target, bool) {
	f := splitColons(arg{s: v, known: true})
	if len(f) != 4 {
		return nil, false
	}
	port := func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= 0 && n <= 65535
	}
	var ts []target
	host2, port2 := f[2], f[3]
	switch {
	case host2 == "" && port2 == "":
		return nil, true // the request's own host and port
	case host2 == "":
		p, ok := port(port2)
		if !ok {
			return nil, false
		}
		if f[0] != "" {
			return []target{{f[0], p}}, true
		}
		for _, r := range reqs {
			ts = append(ts, target{r.host, p})
		}
		return ts, true
	case port2 != "":
		p, ok := port(port2)
		return []target{{host2, p}}, ok
	case f[1] != "":
		p, ok := port(f[1])
		return []target{{host2, p}}, ok
	}
	for _, r := range reqs {
		ts = append(ts, target{host2, r.port})
	}
	if len(ts) == 0 {
		ts = append(ts, target{host2, 443})
	}
	return ts, true
}

// resolveTargets reads curl's --resolve [+]HOST:PORT:ADDR[,ADDR]…: the
// addresses HOST is sent to at PORT (bracketed or bare IPv6 addresses).
// -HOST:PORT removes an entry and connects nowhere.
func resolveTargets(v string) ([]target, bool) {
	if strings.HasPrefix(v, "-") {
		return nil, true
	}
	v = strings.TrimPrefix(v, "+")
	rest := v
	if strings.HasPrefix(rest, "[") {
		end := strings.Index(rest, "]:")
		if end < 0 {
			return nil, false
		}
		rest = rest[end+1:]
	} else if i := strings.IndexByte(rest, ':'); i >= 0 {
		rest = rest[i:]
	} else {
		return nil, false
	}
	portStr, addrs, ok := strings.Cut(rest[1:], ":")
	if !ok {
		return nil, false
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, false
	}
	var ts []target
	for _, a := range strings.Split(addrs, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			return nil, false
		}
		ts = append(ts, target{a, port})
	}
	return ts, true
}

// wgetrcTargets reads a wgetrc command given to wget -e: NAME = VALUE,
// the name insensitive to case, underscores and dashes (wget(1), "Wgetrc
// Commands"). The proxies and the base URL name hosts.
func wgetrcTargets(v string) ([]target, bool) {
	name, val, ok := strings.Cut(v, "=")
	if !ok {
		return nil, true // wget refuses a command without a value
	}
	name = strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "", "\t", "").Replace(name))
	val = strings.TrimSpace(val)
	switch name {
	case "httpproxy", "httpsproxy", "ftpproxy", "base":
		if val == "" {
			return nil, true
		}
		t, ok := urlTarget(val, "http")
		return []target{t}, ok
	}
	return nil, true
}

// hosts checks the targets a connection option names: each host, or any
// host at all (anyDest).
func (c *checker) hosts(ts []target, what string) {
	for _, t := range ts {
		if t.host == anyDest {
			c.anyHost(what)
			continue
		}
		c.host(t, what)
	}
}
