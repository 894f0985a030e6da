package policy

import (
	"strconv"
	"strings"
)

// Hosts named literally in a command's arguments are decided before it
// runs (docs/reference.md, scope.yml): a URL operand of curl or wget, a proxy, a git
// remote, an ssh, scp or rsync destination, a package index or registry,
// nc's host and port. A value known only at run time, and every
// connection a program makes on its own, is decided when it connects.

// host refuses a connection to t unless network allows it.
func (c *checker) host(t target, what string) {
	c.addAll(c.s.net.checkHost(t.host, t.port, what))
}

// urlArg checks a URL argument (see urlTarget).
func (c *checker) urlArg(v arg, defScheme, what string) {
	if !v.known {
		return
	}
	if t, ok := urlTarget(v.s, defScheme); ok {
		c.host(t, what)
	}
}

// proxyArg checks a proxy given as [scheme://][user@]host[:port], def
// being the port assumed when none is written.
func (c *checker) proxyArg(v arg, def int, what string) {
	if !v.known || v.s == "" {
		return
	}
	if t, ok := proxyTarget(v.s, def); ok {
		c.host(t, what)
	}
}

// proxyTarget reads a proxy setting.
func proxyTarget(s string, def int) (target, bool) {
	_, rest, _ := splitScheme(s)
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		rest = rest[at+1:]
	}
	h, p, ok := hostPort(rest, def)
	return target{h, p}, ok && h != ""
}

// hostArgs checks the hosts a program's arguments name.
func (c *checker) hostArgs(p *parsed) {
	if c.s.net.Mode() == NetworkAny {
		return
	}
	c.optionHosts(p)
	ops := p.operands()
	sub := ""
	if len(p.subPath) > 0 {
		sub = p.subPath[0]
	}
	switch p.prog {
	case "curl":
		if p.has("--unix-socket") || p.has("--abstract-unix-socket") {
			break // the URL's host is only named: curl connects to the socket (prog_sockets.go)
		}
		for _, a := range ops {
			c.urlArg(a, "http", "curl connects to")
		}
	case "wget":
		for _, a := range ops {
			c.urlArg(a, "http", "wget connects to")
		}
	case "git":
		if sub == "submodule" {
			ops = p.pos[1:] // git submodule's words are not in git's table
		}
		c.gitHosts(sub, ops)
	case "ssh", "sftp":
		port := lastPort(p, "-p", 22)
		if p.prog == "sftp" {
			port = lastPort(p, "-P", 22)
		}
		c.jumpHosts(p)
		c.sshForwardOptions(p)
		if len(ops) > 0 && ops[0].known {
			c.sshDest(p, ops[0].s, port)
		}
	case "scp":
		port := lastPort(p, "-P", 22)
		c.jumpHosts(p)
		c.sshForwardOptions(p)
		for _, a := range ops {
			if !a.known {
				continue
			}
			if _, _, ok := splitScheme(a.s); ok {
				if t, ok := urlTarget(a.s, ""); ok {
					c.sshHost(p, t)
				}
			} else if t, ok := scpTarget(a.s, port); ok {
				c.sshHost(p, t)
			}
		}
	case "rsync":
		daemon := lastPort(p, "--port", 873)
		for _, a := range ops {
			switch {
			case !a.known:
			case strings.HasPrefix(strings.ToLower(a.s), "rsync://"):
				if t, ok := urlTarget(a.s, ""); ok {
					if !strings.Contains(strings.SplitN(a.s[len("rsync://"):], "/", 2)[0], ":") {
						t.port = daemon
					}
					c.host(t, "rsync connects to")
				}
			case strings.Contains(a.s, "::") && !strings.Contains(a.s[:strings.Index(a.s, "::")], "/"):
				if t, ok := scpTarget(a.s, daemon); ok {
					c.host(t, "rsync connects to")
				}
			default:
				if t, ok := scpTarget(a.s, 22); ok {
					c.host(t, "rsync connects to")
				}
			}
		}
	case "pip", "pip3":
		for _, id := range []string{"-i", "--extra-index-url", "-f"} {
			for _, v := range p.values(id) {
				c.urlArg(v, "", "pip connects to")
			}
		}
		for _, v := range p.values("--proxy") {
			c.proxyArg(v, 80, "pip connects to the proxy")
		}
		c.embeddedURLs(ops, "pip connects to")
	case "npm", "pnpm", "yarn", "bun", "npx":
		for _, v := range rawValues(p.args, "--registry") {
			c.urlArg(v, "", p.prog+" connects to the registry")
		}
		c.embeddedURLs(ops, p.prog+" connects to")
	case "go":
		if sub == "tool" && len(ops) > 1 && ops[0].known && ops[0].s == "pprof" {
			// go tool pprof URL fetches the profile from a server; a
			// source with no scheme that is host:port[/path] is http.
			c.embeddedURLs(ops[1:], "go tool pprof connects to")
			for _, a := range ops[1:] {
				if hostPart, _, _ := strings.Cut(a.s, "/"); a.known && !strings.Contains(a.s, "://") && strings.Contains(hostPart, ":") {
					c.urlArg(a, "http", "go tool pprof connects to")
				}
			}
		}
		if sub == "env" {
			for _, a := range append(p.values("-w"), ops...) {
				if name, val, ok := strings.Cut(a.s, "="); a.known && ok {
					c.addAll(c.s.hostVar(name, &val))
				}
			}
		}
	case "nc", "ncat", "netcat":
		c.ncHosts(p.args)
	case "telnet":
		var pos []arg
		for _, a := range p.args {
			if !strings.HasPrefix(a.s, "-") {
				pos = append(pos, a)
			}
		}
		if len(pos) > 0 && pos[0].known {
			port := 23
			if len(pos) > 1 && pos[1].known {
				port, _ = strconv.Atoi(pos[1].s)
			}
			c.host(target{pos[0].s, port}, "telnet connects to")
		}
	case "socat":
		for _, a := range p.args {
			c.socatAddr(a)
		}
	}
}

// gitHosts checks the remote URL operands of git's network subcommands.
// git remote add and set-url only record a URL: the push or fetch that
// uses it is decided when it connects.
func (c *checker) gitHosts(sub string, ops []arg) {
	var remotes []arg
	switch sub {
	case "clone", "fetch", "pull", "push", "ls-remote":
		if len(ops) > 0 {
			remotes = ops[:1]
		}
	case "submodule":
		// git submodule [--quiet] add [options] URL [path]
		for i, a := range ops {
			if a.s == "add" {
				for _, b := range ops[i+1:] {
					if !strings.HasPrefix(b.s, "-") {
						remotes = []arg{b}
						break
					}
				}
				break
			}
		}
	default:
		return
	}
	for _, a := range remotes {
		if !a.known {
			continue
		}
		if t, ok := gitTarget(a.s); ok {
			c.host(t, "git "+sub+" connects to")
		}
	}
}

// sshDest checks the destination of ssh ([user@]host or
// ssh://[user@]host[:port]) or sftp ([user@]host[:path] or
// sftp://[user@]host[:port][/path]); port is the one -p or -P gives. A
// URL of another scheme is no destination the program reads: refused.
func (c *checker) sshDest(p *parsed, s string, port int) {
	scheme, _, isURL := splitScheme(s)
	var t target
	ok := false
	switch {
	case isURL && strings.EqualFold(scheme, p.prog):
		t, ok = urlTarget(s, "")
	case isURL:
	case p.prog == "sftp" && strings.Contains(s, ":") && !(strings.Contains(s, "[") && !strings.Contains(s, "]:")):
		t, ok = scpTarget(s, port)
	default:
		t, ok = sshTarget(s, port)
	}
	if !ok {
		c.host(target{s, 0}, p.prog+" connects to")
		return
	}
	if h, isBracketed := strings.CutPrefix(t.host, "["); isBracketed {
		t.host = strings.TrimSuffix(h, "]")
	}
	c.sshHost(p, t)
}

// jumpHosts checks ssh's and scp's jump hosts: -J and -o ProxyJump.
func (c *checker) jumpHosts(p *parsed) {
	for _, v := range append(p.values("-J"), sshOptions(p, "proxyjump")...) {
		if !v.known || strings.EqualFold(v.s, "none") {
			continue
		}
		for _, h := range strings.Split(v.s, ",") {
			if _, _, ok := splitScheme(h); ok {
				c.urlArg(arg{s: h, known: true}, "", p.prog+" -J connects to")
				continue
			}
			if at := strings.LastIndexByte(h, '@'); at >= 0 {
				h = h[at+1:]
			}
			if hh, port, ok := hostPort(h, 22); ok {
				c.host(target{hh, port}, p.prog+" -J connects to")
			} else {
				c.host(target{h, 0}, p.prog+" -J connects to")
			}
		}
	}
}

// sshHost checks the destination t of ssh, scp or sftp as its -o options
// change it (ssh_config(5)): HostName replaces the host (%h being the host
// given, %% a percent sign), Port the port, CanonicalDomains appends a
// domain (sshCanonical). Every value given is checked.
func (c *checker) sshHost(p *parsed, t target) {
	hosts := []string{t.host}
	if names := sshOptions(p, "hostname"); len(names) > 0 {
		hosts = hosts[:0]
		for _, n := range names {
			hosts = append(hosts, strings.NewReplacer("%%", "%", "%h", t.host).Replace(n.s))
		}
	}
	hosts = append(hosts, sshCanonical(p, hosts)...)
	ports := []int{t.port}
	for _, v := range sshOptions(p, "port") {
		n, err := strconv.Atoi(v.s)
		if err != nil || n < 1 || n > 65535 {
			n = 0 // not a port: no entry allows it
		}
		ports = append(ports, n)
	}
	for _, h := range hosts {
		for _, port := range ports {
			c.host(target{h, port}, p.prog+" connects to")
		}
	}
}

// sshOptions returns the values of the -o options of ssh, scp or sftp
// with the keyword key (lower case), a value in double quotes unquoted.
func sshOptions(p *parsed, key string) []arg {
	out := sshOptionValues(p, key)
	for i, v := range out {
		if len(v.s) >= 2 && v.s[0] == '"' && v.s[len(v.s)-1] == '"' {
			out[i].s = v.s[1 : len(v.s)-1]
		}
	}
	return out
}

// sshOptionValues returns the values of the -o options of ssh, scp or
// sftp with the keyword key (lower case), written "Keyword=value" or
// "Keyword value" as ssh_config(5) reads them, as written. A value known
// only at run time is refused by sshExtra.
func sshOptionValues(p *parsed, key string) []arg {
	var out []arg
	for _, v := range p.values("-o") {
		if !v.known {
			continue
		}
		s := strings.TrimLeft(v.s, " \t")
		i := strings.IndexAny(s, " \t=")
		if i < 0 || !strings.EqualFold(strings.Trim(s[:i], `"`), key) {
			continue
		}
		val := strings.TrimLeft(s[i:], " \t")
		if rest, ok := strings.CutPrefix(val, "="); ok {
			val = strings.TrimLeft(rest, " \t")
		}
		out = append(out, arg{s: strings.TrimRight(val, " \t"), known: true})
	}
	return out
}

// sshCanonical returns the names ssh may connect to instead of hosts when
// it canonicalizes them (ssh_config(5) CanonicalizeHostname): each host
// followed by each domain of -o CanonicalDomains, for a host name (not an
// address, no trailing dot) with at most CanonicalizeMaxDots dots (1 by
// default, else the largest given). Canonicalization is assumed on unless every -o
// CanonicalizeHostname given says no: the configuration files may turn it
// on. A domain list that cannot be read yields a name no entry allows.
func sshCanonical(p *parsed, hosts []string) []string {
	var domains []string
	for _, v := range sshOptionValues(p, "canonicaldomains") {
		args, ok := sshConfigArgs(v.s)
		if !ok {
			args = []string{v.s}
		}
		domains = append(domains, args...)
	}
	if len(domains) == 0 {
		return nil
	}
	on := false
	modes := sshOptions(p, "canonicalizehostname")
	for _, m := range modes {
		on = on || !strings.EqualFold(m.s, "no")
	}
	if len(modes) > 0 && !on {
		return nil
	}
	maxDots := 1
	for i, v := range sshOptions(p, "canonicalizemaxdots") {
		n, err := strconv.Atoi(v.s)
		if err != nil {
			n = 1 << 30
		}
		if i == 0 || n > maxDots {
			maxDots = n
		}
	}
	var out []string
	for _, h := range hosts {
		if _, isAddr := parseAddr(h); isAddr || strings.HasSuffix(h, ".") || strings.Count(h, ".") > maxDots {
			continue
		}
		for _, d := range domains {
			out = append(out, h+"."+d)
		}
	}
	return out
}

// embeddedURLs checks package operands that hold a URL (pip's `name @
// https://…`, `git+https://…`, npm's tarball and git URLs).
func (c *checker) embeddedURLs(ops []arg, what string) {
	for _, a := range ops {
		if !a.known {
			continue
		}
		if u, ok := embeddedURL(a.s); ok {
			c.urlArg(arg{s: u, known: true}, "", what)
		} else if t, ok := gitTarget(a.s); ok && strings.HasPrefix(a.s, "git@") {
			c.host(t, what)
		}
	}
}

// ncHosts checks nc's host and ports: the first two operands, and the
// proxy of -x. With -U the first operand is a unix socket
// (prog_sockets.go).
func (c *checker) ncHosts(args []arg) {
	pos, unixSocket, ok := ncScan(args, func(v arg) { c.proxyArg(v, 1080, "nc connects to the proxy") })
	if !ok || unixSocket || len(pos) == 0 {
		return
	}
	if len(pos) == 1 {
		if h, port, ok := hostPort(pos[0].s, 0); ok && port > 0 {
			c.host(target{h, port}, "nc connects to")
		}
		return
	}
	for _, pa := range pos[1:] {
		lo, hi, ok := portRange(pa.s)
		if !ok || hi-lo > 16 {
			c.host(target{pos[0].s, 0}, "nc connects to")
			continue
		}
		for port := lo; port <= hi; port++ {
			c.host(target{pos[0].s, port}, "nc connects to")
		}
	}
}

// ncScan reads the argv of nc, ncat or netcat: its operands, whether -U
// (ncat: --unixsock) makes the first one a unix socket, and each -x or
// --proxy value, handed to proxy. ok is false when an argument is known
// only at run time.
func ncScan(args []arg, proxy func(arg)) (pos []arg, unixSocket, ok bool) {
	withValue := "psiwqIOTVMmecxXgG"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !a.known {
			return nil, false, false // an option or operand known only at run time
		}
		if len(a.s) <= 1 || a.s[0] != '-' {
			pos = append(pos, a)
			continue
		}
		if strings.HasPrefix(a.s, "--") {
			unixSocket = unixSocket || a.s == "--unixsock"
			if !strings.Contains(a.s, "=") && i+1 < len(args) && (a.s == "--proxy" || a.s == "--source" || a.s == "--source-port" || a.s == "--wait" || a.s == "--exec" || a.s == "--sh-exec") {
				if a.s == "--proxy" {
					proxy(args[i+1])
				}
				i++
			}
			continue
		}
		for j := 1; j < len(a.s); j++ {
			if a.s[j] == 'U' {
				unixSocket = true
			}
			if strings.IndexByte(withValue, a.s[j]) >= 0 {
				if j == len(a.s)-1 && i+1 < len(args) {
					if a.s[j] == 'x' {
						proxy(args[i+1])
					}
					i++
				}
				break // the rest of the word is the value
			}
		}
	}
	return pos, unixSocket, true
}

// portRange reads a port or a range lo-hi.
func portRange(s string) (lo, hi int, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err := strconv.Atoi(a)
	if err != nil {
		return 0, 0, false
	}
	if !isRange {
		return lo, lo, true
	}
	hi, err = strconv.Atoi(b)
	return lo, hi, err == nil && hi >= lo
}

// socatAddr checks a socat address that connects: TCP:host:port,
// TCP4/TCP6/TCP-CONNECT, UDP…, OPENSSL/SSL, SOCKS4/SOCKS5 (the SOCKS
// server and the target).
func (c *checker) socatAddr(a arg) {
	if !a.known {
		return
	}
	spec, _, _ := strings.Cut(a.s, ",")
	f := splitColons(arg{s: spec, known: true})
	if len(f) < 3 {
		return
	}
	kind := strings.ToUpper(f[0])
	switch kind {
	case "TCP", "TCP4", "TCP6", "TCP-CONNECT", "TCP4-CONNECT", "TCP6-CONNECT", "UDP", "UDP4", "UDP6",
		"UDP-CONNECT", "UDP4-CONNECT", "UDP6-CONNECT", "OPENSSL", "SSL", "OPENSSL-CONNECT", "SCTP", "SCTP-CONNECT":
		port, err := strconv.Atoi(f[2])
		if err != nil {
			port = 0
		}
		c.host(target{f[1], port}, "socat connects to")
	case "SOCKS4", "SOCKS4A", "SOCKS5", "SOCKS5-CONNECT":
		c.host(target{f[1], 1080}, "socat connects to the proxy")
	case "PROXY", "PROXY-CONNECT":
		c.host(target{f[1], 8080}, "socat connects to the proxy")
	}
}

// splitColons splits a value on colons, keeping bracketed IPv6 addresses
// whole.
func splitColons(v arg) []string {
	if !v.known {
		return nil
	}
	var out []string
	cur := strings.Builder{}
	depth := 0
	for _, r := range v.s {
		switch {
		case r == '[':
			depth++
		case r == ']' && depth > 0:
			depth--
		case r == ':' && depth == 0:
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(out, cur.String())
}

// lastPort is the port the last value of option id gives, else def.
func lastPort(p *parsed, id string, def int) int {
	vs := p.values(id)
	if len(vs) == 0 || !vs[len(vs)-1].known {
		return def
	}
	if n, err := strconv.Atoi(vs[len(vs)-1].s); err == nil {
		return n
	}
	return def
}

// rawValues returns the values of a long option in an argv not parsed by
// a table row: --name VALUE and --name=VALUE.
func rawValues(args []arg, name string) []arg {
	var out []arg
	for i, a := range args {
		if !a.known {
			continue
		}
		if v, ok := strings.CutPrefix(a.s, name+"="); ok {
			out = append(out, arg{s: v, known: true})
		} else if a.s == name && i+1 < len(args) {
			out = append(out, args[i+1])
		}
	}
	return out
}

// hostVar checks a variable that names a host programs connect to: a
// proxy (http_proxy…), Go's module proxy and checksum database. A value
// known only at run time is decided when the program connects.
func (s *Scope) hostVar(name string, val *string) []Violation {
	if val == nil || s.net.Mode() == NetworkAny {
		return nil
	}
	var ts []target
	switch name {
	case "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "ftp_proxy", "FTP_PROXY":
		def := 80
		if strings.HasPrefix(strings.ToLower(*val), "socks") {
			def = 1080
		}
		if t, ok := proxyTarget(*val, def); ok {
			ts = append(ts, t)
		}
	case "RSYNC_PROXY":
		if t, ok := proxyTarget(*val, 0); ok && t.port > 0 {
			ts = append(ts, t)
		}
	case "GOPROXY":
		for _, item := range strings.FieldsFunc(*val, func(r rune) bool { return r == ',' || r == '|' }) {
			if item == "direct" || item == "off" {
				continue
			}
			if t, ok := urlTarget(item, "https"); ok {
				ts = append(ts, t)
			}
		}
	case "GOSUMDB":
		f := strings.Fields(*val)
		switch {
		case len(f) == 0 || f[0] == "off":
		case len(f) > 1:
			if t, ok := urlTarget(f[1], "https"); ok {
				ts = append(ts, t)
			}
		default:
			name, _, _ := strings.Cut(f[0], "+")
			ts = append(ts, target{name, 443})
		}
	}
	var vs []Violation
	for _, t := range ts {
		vs = append(vs, s.net.checkHost(t.host, t.port, name+"="+*val+" makes programs connect to")...)
	}
	return vs
}
