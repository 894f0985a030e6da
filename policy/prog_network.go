package policy

import "strings"

// Network clients: curl, wget, ssh, scp, sftp, rsync.
//
// They read and write local files: curl -o, -T, -K, -d @file and -F
// name=@file (curl's manual: "If you start the data with the letter @, the
// rest should be a file name to read the data from"); wget -O, -i and -e
// (wgetrc commands). ssh -o ProxyCommand, LocalCommand, KnownHostsCommand
// and Match exec run local programs (ssh_config(5)); scp -S, sftp -S and
// rsync -e run another remote-shell program (GTFOBins: ssh, scp, rsync,
// "Shell"); scp -D and sftp -D run a local SFTP server instead.
//
// The options marked dest name where they connect besides the URL: curl's
// proxies (-x, --preproxy, --proxy1.0, --socks4, --socks4a, --socks5,
// --socks5-hostname), its DNS-over-HTTPS server and name servers, the
// address --connect-to and --resolve send a request to; wget's base URL
// and the proxies its -e wgetrc commands set; ssh's -R and -W
// (prog_ssh_forward.go). Their hosts are decided against network before
// the command runs (prog_hosts.go).

// registerNetwork adds the table rows of this file.
func registerNetwork(add adder) {
	add(&spec{operands: opNone, extra: socatExtra, opts: opts(val("-t"), val("-T"), val("-b"), val("-lp"), wr("-lf"), wr("-L"), wr("-W"),
		wr("-r"), wr("-R"), flags("-d -dd -ddd -dddd -D -v -x -u -U -g -4 -6 -s -S -h -hh -hhh -V -lm -lh -lu -ly"))}, "socat")
	add(&spec{operands: opNone, rewrite: curlExpand, extra: curlExtra, opts: opts(wr("-o --output"), wr("--output-dir"), conf("-K --config", "loads options (url = file:…, output) from a file"), rd("-T --upload-file"),
		val("-d --data --data-binary --data-ascii --json"), val("--data-urlencode"), val("--data-raw"), val("-F --form"), val("--form-string"),
		wr("-c --cookie-jar"), wr("-D --dump-header"), wr("--trace --trace-ascii --stderr --libcurl --etag-save"), val("-b --cookie"),
		rd("-E --cert"), rd("--key"), rd("--cacert"), rd("--netrc-file"), val("-u --user"), val("-H --header"), val("-X --request"),
		val("-A --user-agent"), val("-e --referer"), val("-m --max-time"), val("--connect-timeout"), val("-w --write-out"),
		val("--noproxy"), val("-r --range"), val("--retry"), val("-z --time-cond"),
		dest(val("--url"), connRequest), dest(val("-x --proxy"), connProxy), dest(val("--preproxy"), connProxy),
		dest(val("--proxy1.0"), connProxy), dest(val("--socks4"), connProxy), dest(val("--socks4a"), connProxy),
		dest(val("--socks5"), connProxy), dest(val("--socks5-hostname"), connProxy), dest(val("--doh-url"), connHTTPS),
		dest(val("--ipfs-gateway"), connHTTPS), dest(val("--dns-servers"), connNameServers),
		dest(val("--connect-to"), connConnectTo), dest(val("--resolve"), connResolve), val("--unix-socket"), val("--abstract-unix-socket"))}, "curl")
	add(&spec{operands: opNone, opts: opts(wr("-O --output-document"), wr("-o --output-file"), wr("-a --append-output"),
		chdir("-P --directory-prefix"), rd("-i --input-file"), rd("--post-file"), dest(conf("-e --execute", "runs wgetrc commands"), connWgetrc), dest(val("-B --base"), connRequest),
		exe("--use-askpass", whyExec), conf("--config", "loads wgetrc commands (output_document…)"), val("-t --tries"), val("-T --timeout"), val("-U --user-agent"),
		val("--header"), val("--post-data"), val("-l --level"), val("-A --accept"), val("-R --reject"))}, "wget")
	add(&spec{posixStop: true, operands: opNone, extra: sshExtra, opts: opts(val("-o"), rd("-F"), wr("-E"), rd("-i"), val("-S"),
		val("-p"), val("-l"), val("-L"), dest(val("-R"), connSSHRemote), val("-D"), val("-J"), dest(val("-W"), connSSHStdio), val("-b"), val("-c"), val("-m"), val("-O"), val("-Q"),
		val("-w"), val("-e"), val("-B"), val("-I"), flags("-4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -X -x -Y -y"))}, "ssh")
	add(&spec{operands: opWriteLast, extra: sshExtra, opts: opts(exe("-S", whyExec), rd("-F"), val("-o"), rd("-i"), val("-P"),
		val("-l"), val("-c"), val("-J"), exe("-D", "runs a local SFTP server program"), val("-X"), flags("-3 -4 -6 -A -B -C -O -p -q -R -r -s -T -v"))}, "scp")
	add(&spec{operands: opNone, extra: sshExtra, opts: opts(exe("-S", whyExec), exe("-D", "runs a local SFTP server program"), rd("-F"), val("-o"),
		rd("-i"), val("-P"), val("-J"), rd("-b"), val("-B"), val("-c"), val("-l"), val("-R"), val("-s"), val("-X"),
		flags("-4 -6 -A -a -C -f -N -p -q -r -v"))}, "sftp")
	add(&spec{operands: opWriteLast, opts: opts(exe("-e --rsh", "runs a remote shell program"), exe("--rsync-path", whyExec),
		wr("--log-file"), rd("--files-from"), rd("--exclude-from"), rd("--include-from"), rd("--password-file"), wr("--backup-dir"),
		wr("--temp-dir -T"), wr("--partial-dir"), val("--exclude"), val("--include"), val("-f --filter"), val("--chmod"),
		val("--chown"), val("--timeout"), val("--bwlimit"), val("--max-size"), val("--min-size"), val("-B --block-size"),
		flags("-a -r -v -z -P -n -u -l -L -p -t -g -o -D -H -A -X -c -h -q -i -W -x -R -S --delete --dry-run --archive --progress"))}, "rsync")
}

// curlExpand reads curl's --expand-OPTION VALUE (curl 8.3) as OPTION
// VALUE: the option is the same, with the {{name}} in its value replaced at
// run time by a variable (--variable, from text, a file or the
// environment). A value holding {{ is thus known only at run time. Options
// after -- are operands.
func curlExpand(argv []arg) []arg {
	var out []arg
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		name, ok := strings.CutPrefix(a.s, "--expand-")
		if a.known && a.s == "--" {
			return append(out, argv[i:]...)
		}
		if !a.known || !ok {
			out = append(out, a)
			continue
		}
		if opt, v, hasEq := strings.Cut(name, "="); hasEq {
			out = append(out, arg{s: "--" + opt, known: true}, curlExpanded(arg{s: v, known: true}))
			continue
		}
		out = append(out, arg{s: "--" + name, known: true})
		if i+1 < len(argv) {
			i++
			out = append(out, curlExpanded(argv[i]))
		}
	}
	return out
}

// curlExpanded is the value of an --expand- option: known only at run time
// when it names a variable.
func curlExpanded(v arg) arg {
	if v.known && strings.Contains(v.s, "{{") {
		return arg{s: v.s, unbounded: true, data: true}
	}
	return v
}

// curlExtra checks the files named by -d @file and -F name=@file.
func curlExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, o := range p.occ {
		if !o.has {
			continue
		}
		switch o.id {
		case "-d", "--data-urlencode", "-F":
			if !o.value.known {
				if o.value.unbounded {
					c.unknownOperand("curl " + o.id + " (a value starting with @ names a file to send)")
				}
				continue
			}
			for _, f := range curlDataFiles(o.id, o.value.s) {
				c.operand(f, AccessRead, st.cwd, "curl "+o.id+" upload")
			}
		case "-b":
			if o.value.known && !strings.Contains(o.value.s, "=") {
				c.operand(o.value.s, AccessRead, st.cwd, "curl cookie file")
			}
		}
	}
}

// curlDataFiles returns the files a data or form value makes curl send
// (curl(1)): "@file" for -d, --data-binary, --data-ascii and --json;
// "@file" or "name@file" for --data-urlencode; "name=@file" and
// "name=<file" (with ";type=…" and comma-separated lists) for -F.
// Standard input ("-") is not a file.
func curlDataFiles(id, v string) []string {
	var files []string
	switch id {
	case "-d":
		if f, ok := strings.CutPrefix(v, "@"); ok {
			files = append(files, f)
		}
	case "--data-urlencode":
		if i := strings.IndexByte(v, '@'); i >= 0 && !strings.Contains(v[:i], "=") {
			files = append(files, v[i+1:])
		}
	case "-F":
		_, content, ok := strings.Cut(v, "=")
		if !ok || (!strings.HasPrefix(content, "@") && !strings.HasPrefix(content, "<")) {
			break
		}
		content = content[1:]
		for _, part := range strings.Split(content, ",") {
			f, _, _ := strings.Cut(strings.Trim(part, `"`), ";")
			files = append(files, f)
		}
		if strings.Contains(content, ",") {
			f, _, _ := strings.Cut(content, ";")
			files = append(files, f) // a file name with a comma
		}
	}
	out := files[:0]
	for _, f := range files {
		if f != "" && f != "-" {
			out = append(out, f)
		}
	}
	return out
}

// sshExtra refuses -o options that run programs or load code, and checks
// the local Unix socket an -R or -o RemoteForward forwarding connects to
// as a file written to and against the unix: entries (prog_sockets.go).
func sshExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, v := range p.values("-o") {
		if !v.known {
			c.danger(p, allowed, "-o", "-o", "sets an option known only at run time")
			continue
		}
		key, _, _ := strings.Cut(strings.TrimLeft(v.s, " \t"), "=")
		key, _, _ = strings.Cut(strings.TrimRight(key, " \t"), " ")
		key, _, _ = strings.Cut(key, "\t")
		switch key = strings.ToLower(strings.Trim(key, `"`)); key {
		case "proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "match", "include", "controlpath", "controlmaster", "proxyuseeconnect", "remotecommand", "securitykeyprovider", "pkcs11provider", "sshaskpass":
			c.danger(p, allowed, "-o", "-o "+key, "runs programs or loads code")
		}
	}
	var specs []string
	if p.prog == "ssh" {
		for _, v := range p.values("-R") {
			if v.known {
				specs = append(specs, v.s)
			}
		}
	}
	for _, v := range sshOptionValues(p, "remoteforward") {
		if spec, ok := sshRemoteForwardSpec(v.s); ok {
			specs = append(specs, spec)
		}
	}
	for _, spec := range specs {
		if path, ok := sshLocalSocket(spec); ok {
			if strings.ContainsAny(path, "%~") {
				c.unknownOperand(p.prog + " -R socket " + path)
				continue
			}
			c.operand(path, AccessWrite, st.cwd, p.prog+" -R connects to the socket")
			c.socket(arg{s: path, known: true}, st.cwd, p.prog+" -R connects to")
		}
	}
}

// socatExtra checks socat's two addresses. EXEC, SYSTEM and SHELL run a
// command (GTFOBins: socat, "Shell"); OPEN, FILE, GOPEN, CREATE and PIPE
// open the file their path names, and so does a bare path: written with
// CREATE, PIPE or the creat, append or trunc options, read otherwise. A
// socket is decided by socketArgs, and hosts by hostArgs.
func socatExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	for _, a := range p.operands() {
		if !a.known {
			c.danger(p, allowed, "ADDRESS", "address", "is known only at run time (an EXEC or SYSTEM address runs a command)")
			continue
		}
		addr, options, _ := strings.Cut(a.s, ",")
		kind, path, typed := strings.Cut(addr, ":")
		kind = strings.ToUpper(kind)
		if !typed {
			kind, path = "GOPEN", addr
			if !strings.Contains(path, "/") {
				continue // -, STDIO, STDIN, a name socat knows
			}
		}
		switch kind {
		case "EXEC", "SYSTEM", "SHELL":
			c.danger(p, allowed, kind, a.s, "runs a command")
		case "OPEN", "FILE", "GOPEN", "CREATE", "CREAT", "PIPE":
			if path == "" || kind == "GOPEN" && c.isSocket(path, st.cwd) {
				continue
			}
			access := AccessRead
			for o := range strings.SplitSeq(strings.ToLower(options), ",") {
				name, _, _ := strings.Cut(o, "=")
				if name == "creat" || name == "create" || name == "append" || name == "trunc" || name == "wronly" || name == "rdwr" {
					access = AccessWrite
				}
			}
			if kind == "CREATE" || kind == "CREAT" || kind == "PIPE" {
				access = AccessWrite
			}
			c.operand(path, access, st.cwd, "socat "+kind)
		}
	}
}
