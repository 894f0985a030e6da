package policy

import (
	"strconv"
	"strings"
)

// Hosts named in command arguments: URLs, scp-like remotes, host:port
// pairs. These parsers find the host and port a program will connect to,
// as the program reads its argument; a value they cannot read is left to
// the connection-time check.

// schemePorts are the default ports of the URL schemes network clients
// speak; a scheme not listed (file:, data:) is no connection of its own.
var schemePorts = map[string]int{
	"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21, "ftps": 990, "sftp": 22, "scp": 22,
	"ssh": 22, "git": 9418, "git+ssh": 22, "ssh+git": 22, "git+https": 443, "git+http": 80, "git+git": 9418,
	"rsync": 873, "telnet": 23, "dict": 2628, "gopher": 70, "gophers": 70, "ldap": 389, "ldaps": 636,
	"imap": 143, "imaps": 993, "pop3": 110, "pop3s": 995, "smtp": 25, "smtps": 465, "mqtt": 1883,
	"rtsp": 554, "smb": 445, "smbs": 445, "tftp": 69, "socks4": 1080, "socks4a": 1080, "socks5": 1080,
	"socks5h": 1080, "hg+https": 443, "hg+http": 80, "svn+ssh": 22, "svn": 3690, "svn+https": 443,
	"bzr+https": 443, "bzr+ssh": 22,
}

// target is a host and port a program connects to.
type target struct {
	host string
	port int
}

// splitScheme splits "scheme://rest"; ok is false without "://".
func splitScheme(s string) (scheme, rest string, ok bool) {
	i := strings.Index(s, "://")
	if i <= 0 {
		return "", s, false
	}
	scheme = strings.ToLower(s[:i])
	if strings.Trim(scheme, "abcdefghijklmnopqrstuvwxyz0123456789+.-") != "" {
		return "", s, false
	}
	return scheme, s[i+3:], true
}

// urlTarget returns the host and port of a URL. defScheme is the scheme a
// program assumes when none is written ("" when a value without a scheme
// is not a URL). ok is false when the value names no network host (a
// local path, file://, a scheme without a known port and none given).
func urlTarget(s, defScheme string) (t target, ok bool) {
	scheme, rest, has := splitScheme(s)
	if !has {
		if defScheme == "" {
			return target{}, false
		}
		scheme = defScheme
	}
	def, known := schemePorts[scheme]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	auth := rest[:end]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = auth[at+1:]
	}
	host, port, ok := hostPort(auth, def)
	if !ok || (!known && port == 0) {
		return target{}, false
	}
	return target{host, port}, true
}

// hostPort splits "host[:port]" (an IPv6 address in brackets); def is the
// port when none is written. A port that is not a number gives ok false.
func hostPort(s string, def int) (host string, port int, ok bool) {
	if s == "" {
		return "", 0, false
	}
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, false
		}
		host, rest := s[:end+1], s[end+1:]
		if rest == "" {
			return host, def, true
		}
		p, has := strings.CutPrefix(rest, ":")
		if !has {
			return "", 0, false
		}
		n, err := strconv.Atoi(p)
		return host, n, err == nil && p != ""
	}
	h, p, has := strings.Cut(s, ":")
	if !has || strings.Contains(p, ":") {
		if has {
			return s, def, true // an IPv6 address without brackets
		}
		return h, def, true
	}
	if p == "" {
		return h, def, true
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return h, n, true
}

// scpTarget reads an scp-like remote, [user@]host:path, as git, scp and
// rsync do: a colon before any slash. ok is false for a local path.
func scpTarget(s string, port int) (target, bool) {
	colon := strings.IndexByte(s, ':')
	if colon <= 0 {
		return target{}, false
	}
	if strings.HasPrefix(s, "[") {
		if end := strings.Index(s, "]:"); end > 0 {
			colon = end + 1
		}
	}
	if strings.Contains(s[:colon], "/") {
		return target{}, false
	}
	host := s[:colon]
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	if host == "" {
		return target{}, false
	}
	return target{host, port}, true
}

// sshTarget reads an ssh destination: ssh://[user@]host[:port] or
// [user@]host.
func sshTarget(s string, port int) (target, bool) {
	if scheme, _, ok := splitScheme(s); ok {
		if scheme != "ssh" {
			return target{}, false
		}
		return urlTarget(s, "")
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		s = s[at+1:]
	}
	if s == "" {
		return target{}, false
	}
	return target{s, port}, true
}

// gitTarget reads a git remote given as a URL or scp-like remote; a
// remote's name or a local path gives ok false.
func gitTarget(s string) (target, bool) {
	if strings.HasPrefix(s, "-") {
		return target{}, false
	}
	if _, _, ok := splitScheme(s); ok {
		return urlTarget(s, "")
	}
	if strings.Contains(s, "::") {
		return target{}, false // transport::address, a remote helper
	}
	return scpTarget(s, 22)
}

// embeddedURL returns the URL inside a requirement or package spec
// (`name @ https://…`, `git+https://…`), if any.
func embeddedURL(s string) (string, bool) {
	i := strings.Index(s, "://")
	if i <= 0 {
		return "", false
	}
	j := i
	for j > 0 && strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-", rune(s[j-1])) {
		j--
	}
	if j == i {
		return "", false
	}
	return s[j:], true
}
