package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The network section of scope.yml (docs/reference.md, scope.yml): where the shell's
// programs may connect. It is written in one of three forms, chosen to
// survive gptel's scope writer (a top-level scalar, or a list of strings
// written unquoted):
//
//	network: none   # no connection at all; also what a missing key means
//	network: any    # unrestricted
//	network:        # only these
//	  - github.com              # this host, ports 80 and 443
//	  - .githubusercontent.com  # every subdomain of it (NO_PROXY style)
//	  - proxy.golang.org:443    # this host, this port
//	  - localhost:8080          # loopback only where named
//	  - unix:/run/docker.sock   # one host unix socket (network_sockets.go)
//
// A list may also hold the word any: every host, and the list's unix:
// entries besides (a scalar any names no socket). A list with no host
// entry reaches no host: none, with its sockets.
//
// Loopback, private (RFC 1918, ULA, CGNAT), link-local and the other
// non-public addresses are reachable only where an entry names them: the
// address itself, or localhost for loopback. A name that resolves to such
// an address is refused, so a DNS answer cannot bring an allowed name
// inside the machine or its network; cloud metadata addresses are link-local
// or private, so only an entry that is that exact address reaches them.

// NetworkMode is what a scope's network section lets programs reach, as
// [Network.Mode] reports it. The runner turns it into what a call's
// programs really get (exec.NetworkMode, a result's network_mode).
type NetworkMode string

// The modes of the network section.
const (
	NetworkNone NetworkMode = "none" // no connection at all
	NetworkAny  NetworkMode = "any"  // unrestricted
	NetworkList NetworkMode = "list" // only the listed hosts
)

// anyEntry is the word any as an entry of a network list: every host,
// with the list's unix sockets.
const anyEntry = string(NetworkAny)

// ParseNetworkMode reads the network section written as one word: none or
// any (a list is written as a list, never as the word list).
func ParseNetworkMode(s string) (NetworkMode, error) {
	switch m := NetworkMode(s); m {
	case NetworkNone, NetworkAny:
		return m, nil
	}
	return "", fmt.Errorf("network is none, any or a list of hosts, not %q", s)
}

// String is the mode's word.
func (m NetworkMode) String() string { return string(m) }

// ruleNetwork is the rule of a refused connection, and ruleNetworkAny the
// rule of one that network: any allows.
const (
	ruleNetwork    = "network"
	ruleNetworkAny = "network any"
)

// NetworkRules is the network section as written: a mode keyword or a list
// of entries. The zero value is a missing section, which means none.
type NetworkRules struct {
	// Mode is "" (no network key), NetworkNone, NetworkAny or NetworkList.
	Mode NetworkMode `yaml:"-" json:"-"`
	// Hosts are the entries of a list, as written: hosts, unix: sockets
	// and the word any.
	Hosts []string `yaml:"-" json:"-"`
}

// IsZero reports a missing section (the YAML encoder then leaves the key out).
func (r NetworkRules) IsZero() bool { return r.Mode == "" }

// UnmarshalYAML reads `none`, `any` or a list of strings; anything else is
// an error naming the line. An empty value (`network:`) is a missing section.
func (r *NetworkRules) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			*r = NetworkRules{Mode: NetworkNone}
			return nil
		}
		if m, err := ParseNetworkMode(n.Value); err == nil && n.Tag == "!!str" {
			*r = NetworkRules{Mode: m}
			return nil
		}
		return fmt.Errorf("line %d: network is none, any or a list of hosts and unix: sockets, not %q", n.Line, n.Value)
	case yaml.SequenceNode:
		hosts := make([]string, 0, len(n.Content))
		for i, item := range n.Content {
			if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
				return fmt.Errorf("line %d: network[%d] is not a host (a string such as example.com, .example.com, example.com:8080 or unix:/run/app.sock)", item.Line, i)
			}
			hosts = append(hosts, item.Value)
		}
		*r = NetworkRules{Mode: NetworkList, Hosts: hosts}
		return nil
	}
	return fmt.Errorf("line %d: network is none, any or a list of hosts and unix: sockets", n.Line)
}

// MarshalYAML writes the section in the form it was read.
func (r NetworkRules) MarshalYAML() (any, error) {
	if r.Mode == NetworkList {
		if r.Hosts == nil {
			return []string{}, nil
		}
		return r.Hosts, nil
	}
	if r.Mode == "" {
		return NetworkNone.String(), nil
	}
	return r.Mode.String(), nil
}

// MarshalJSON writes "none", "any" or the list of entries; a missing
// section is "none", what it means.
func (r NetworkRules) MarshalJSON() ([]byte, error) {
	v, err := r.MarshalYAML()
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// UnmarshalJSON reads what [NetworkRules.MarshalJSON] writes.
func (r *NetworkRules) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		m, err := ParseNetworkMode(s)
		if err != nil {
			return err
		}
		*r = NetworkRules{Mode: m}
		return nil
	}
	var hosts []string
	if err := json.Unmarshal(data, &hosts); err != nil {
		return fmt.Errorf("network is none, any or a list of hosts: %w", err)
	}
	*r = NetworkRules{Mode: NetworkList, Hosts: hosts}
	return nil
}

// Network is the compiled network section of a scope (value type,
// immutable): the decisions of the HTTP and SOCKS proxies, the DNS stub and
// the static checks of literal hosts.
type Network struct {
	mode    NetworkMode
	entries []hostEntry
	// sockets are the list's unix: entries (network_sockets.go).
	sockets []socketEntry
	// ceiling is the managed layer's network, nil for none: what it does
	// not allow is refused whatever the section says (network_managed.go).
	ceiling *Network
}

// The kinds of a network entry.
const (
	hostExact     uint8 = iota // a host name
	hostSuffix                 // .domain: every subdomain
	hostAddr                   // an IP address
	hostLocalhost              // localhost: the name, and loopback addresses
)

// hostEntry is one compiled entry of a network list.
type hostEntry struct {
	rule string // e.g. "network[2] proxy.golang.org:443"
	kind uint8
	name string // lower case, no trailing dot; a suffix keeps its leading dot
	addr netip.Addr
	port int // 0: ports 80 and 443
}

// WithAnyHost returns the section with every host allowed and the same
// unix sockets: the network observe mode runs calls with (docs/learning.md).
// A managed ceiling stays.
func (n Network) WithAnyHost() Network {
	n.mode, n.entries = NetworkAny, nil
	return n
}

// Network returns the compiled network section.
func (s *Scope) Network() Network { return s.net }

// ownMode is the section's own mode, none, any or list, without its
// ceiling (see Mode). A list without host entries is none, one holding
// the word any is any.
func (n Network) ownMode() NetworkMode {
	if n.mode == "" {
		return NetworkNone
	}
	return n.mode
}

// compileNetwork validates and compiles the network section; an invalid
// entry is an error naming it.
func compileNetwork(r NetworkRules) (Network, error) {
	switch r.Mode {
	case "", NetworkNone:
		return Network{mode: NetworkNone}, nil
	case NetworkAny:
		return Network{mode: NetworkAny}, nil
	case NetworkList:
	default:
		return Network{}, fmt.Errorf("%w: network is none, any or a list of hosts, not %q", ErrInvalidScope, r.Mode)
	}
	n := Network{mode: NetworkNone}
	anyHost := false
	for i, h := range r.Hosts {
		rule := fmt.Sprintf("network[%d] %s", i, h)
		switch {
		case h == anyEntry:
			anyHost = true
			continue
		case h == string(NetworkNone):
			return Network{}, fmt.Errorf("%w: network[%d] %q: none is not an entry: a list without hosts reaches none (leave it out)", ErrInvalidScope, i, h)
		case strings.HasPrefix(h, socketPrefix):
			p, err := parseSocketEntry(h)
			if err != nil {
				return Network{}, fmt.Errorf("%w: network[%d] %q: %v", ErrInvalidScope, i, h, err)
			}
			n.sockets = append(n.sockets, socketEntry{rule: rule, path: p})
			continue
		}
		e, err := parseHostEntry(h)
		if err != nil {
			return Network{}, fmt.Errorf("%w: network[%d] %q: %v", ErrInvalidScope, i, h, err)
		}
		e.rule = rule
		n.entries = append(n.entries, e)
	}
	switch {
	case anyHost:
		n.mode = NetworkAny
	case len(n.entries) > 0:
		n.mode = NetworkList
	}
	return n, nil
}

// ValidateHostEntry checks one entry of a network list as [Compile] does:
// `host`, `.domain`, `host:port`, an IP address, `[IPv6]:port`. `scope
// expand --allow-host` refuses what a scope would.
func ValidateHostEntry(s string) error {
	_, err := parseHostEntry(s)
	return err
}

// parseHostEntry compiles one entry of a network list (without its rule).
func parseHostEntry(s string) (hostEntry, error) {
	switch {
	case s == "":
		return hostEntry{}, errors.New("empty entry")
	case s == anyEntry || s == string(NetworkNone):
		return hostEntry{}, fmt.Errorf("%s is a word of the network section, not a host", s)
	case strings.HasPrefix(s, socketPrefix):
		return hostEntry{}, errors.New("a unix socket is not a host: allow it with --allow-socket PATH")
	case strings.HasPrefix(s, "*"):
		return hostEntry{}, errors.New("an entry may not begin with * (gptel writes entries unquoted and YAML reads * as an alias): write .example.com for every subdomain of example.com")
	case strings.Contains(s, "://"):
		return hostEntry{}, errors.New("a URL is not a host: write its host, and :port if it is not 80 or 443")
	case strings.ContainsAny(s, "/\\"):
		return hostEntry{}, errors.New("a path is not a host")
	case strings.Contains(s, "@"):
		return hostEntry{}, errors.New("a user part (user@) is not a host")
	case strings.ContainsAny(s, "*?"):
		return hostEntry{}, errors.New("wildcards are not supported: a leading dot (.example.com) means every subdomain")
	case strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return hostEntry{}, errors.New("contains a space or control character")
	}
	host, port, err := splitHostPort(s)
	if err != nil {
		return hostEntry{}, err
	}
	var e hostEntry
	e.port = port
	if a, ok := parseAddr(host); ok {
		e.kind, e.addr = hostAddr, a
		return e, nil
	}
	if strings.HasPrefix(host, "[") {
		return hostEntry{}, fmt.Errorf("%s is not an IPv6 address", host)
	}
	if strings.HasPrefix(host, ".") {
		name, err := canonName(host[1:])
		if err != nil {
			return hostEntry{}, err
		}
		e.kind, e.name = hostSuffix, "."+name
		return e, nil
	}
	name, err := canonName(host)
	if err != nil {
		return hostEntry{}, err
	}
	e.kind, e.name = hostExact, name
	if name == "localhost" {
		e.kind = hostLocalhost
	}
	return e, nil
}

// splitHostPort splits an entry into its host and port (0 when none is
// written). An IPv6 address takes a port only in brackets.
func splitHostPort(s string) (host string, port int, err error) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, errors.New("unclosed [ in an IPv6 address")
		}
		host, rest := s[:end+1], s[end+1:]
		if rest == "" {
			return host, 0, nil
		}
		p, ok := strings.CutPrefix(rest, ":")
		if !ok {
			return "", 0, fmt.Errorf("unexpected %q after %s", rest, host)
		}
		port, err := parsePort(p)
		return host, port, err
	}
	switch strings.Count(s, ":") {
	case 0:
		return s, 0, nil
	case 1:
		h, p, _ := strings.Cut(s, ":")
		if h == "" {
			return "", 0, errors.New("no host before the port")
		}
		port, err := parsePort(p)
		return h, port, err
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return s, 0, nil
	}
	return "", 0, errors.New("an IPv6 address with a port is written [address]:port")
}

// parsePort reads a decimal port, 1 to 65535.
func parsePort(p string) (int, error) {
	if p == "" || len(p) > 5 || strings.Trim(p, "0123456789") != "" {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", p)
	}
	n, _ := strconv.Atoi(p)
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", p)
	}
	return n, nil
}

// parseAddr reads an IP address, bracketed or not, without a zone; an
// IPv4-mapped IPv6 address is its IPv4 address.
func parseAddr(h string) (netip.Addr, bool) {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
		if !strings.Contains(h, ":") {
			return netip.Addr{}, false
		}
	}
	a, err := netip.ParseAddr(h)
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// canonName validates a host name and returns it in lower case without a
// trailing dot. Names are ASCII (an internationalized name is written in its
// xn-- form), and the last label begins with a letter: a name such as
// 2130706433 or 0x7f.1 is an IPv4 address to the C resolver.
func canonName(h string) (string, error) {
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return "", errors.New("empty host name")
	}
	if len(h) > 253 {
		return "", errors.New("host name longer than 253 characters")
	}
	lower := make([]byte, len(h))
	for i := range len(h) {
		c := h[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		case c >= 0x80:
			return "", fmt.Errorf("host name %q is not ASCII: write its xn-- (punycode) form", h)
		default:
			return "", fmt.Errorf("host name %q has the character %q", h, c)
		}
		lower[i] = c
	}
	name := string(lower)
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" {
			return "", fmt.Errorf("host name %q has an empty label", h)
		}
		if len(l) > 63 {
			return "", fmt.Errorf("host name %q has a label longer than 63 characters", h)
		}
	}
	if last := labels[len(labels)-1]; last[0] < 'a' || last[0] > 'z' {
		return "", fmt.Errorf("%q is neither a host name (its last label must begin with a letter) nor an IP address", h)
	}
	return name, nil
}

// canonHost reads a host as a program names it: an IP address (bracketed
// or not; a zone is dropped) or a host name.
func canonHost(h string) (name string, addr netip.Addr, ok bool) {
	if a, ok := parseAddr(h); ok {
		return "", a, true
	}
	if lit, zone, ok := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), "%"); ok && zone != "" {
		if a, err := netip.ParseAddr(lit); err == nil && a.Is6() && a.Zone() == "" {
			return "", a.Unmap(), true
		}
	}
	name, err := canonName(h)
	if err != nil {
		return "", netip.Addr{}, false
	}
	return name, netip.Addr{}, true
}

// portMatches reports whether an entry's port admits port.
func (e *hostEntry) portMatches(port int) bool {
	if e.port == 0 {
		return port == 80 || port == 443
	}
	return e.port == port
}

// ownAllowHost decides a host name or IP literal and port before any
// resolution, by the section alone (see AllowHost). rule is the entry that
// allowed it, or "network".
func (n Network) ownAllowHost(host string, port int) (allowed bool, rule string) {
	e := n.matchHost(host, port)
	switch {
	case n.mode == NetworkAny:
		return true, ruleNetworkAny
	case e == nil:
		return false, ruleNetwork
	}
	return true, e.rule
}

// matchHost returns the first list entry that admits host and port.
func (n Network) matchHost(host string, port int) *hostEntry {
	if n.mode != NetworkList || port < 1 || port > 65535 {
		return nil
	}
	name, addr, ok := canonHost(host)
	if !ok {
		return nil
	}
	for i := range n.entries {
		e := &n.entries[i]
		if !e.portMatches(port) {
			continue
		}
		switch {
		case addr.IsValid():
			if (e.kind == hostAddr && e.addr == addr) || (e.kind == hostLocalhost && addr.IsLoopback()) {
				return e
			}
		case e.kind == hostExact, e.kind == hostLocalhost:
			if name == e.name {
				return e
			}
		case e.kind == hostSuffix:
			if len(name) > len(e.name) && strings.HasSuffix(name, e.name) {
				return e
			}
		}
	}
	return nil
}

// ownAllowAddr decides the address a permitted host resolved to, just
// before it is dialed, by the section alone (see AllowAddr). A public
// address is allowed when the host is; a loopback, private, link-local or
// other non-public address only when an entry names it (the address itself
// at that port, or localhost for a loopback address that localhost
// resolved to); an IP literal only as itself.
func (n Network) ownAllowAddr(host string, port int, ip netip.Addr) (allowed bool, rule string) {
	if n.mode == NetworkAny {
		return true, ruleNetworkAny
	}
	e := n.matchHost(host, port)
	if e == nil || !ip.IsValid() {
		return false, ruleNetwork
	}
	ip = ip.WithZone("").Unmap()
	name, lit, _ := canonHost(host)
	if lit.IsValid() {
		if lit != ip {
			return false, ruleNetwork
		}
		return true, e.rule
	}
	if name != "localhost" && publicAddr(ip) {
		return true, e.rule
	}
	for i := range n.entries {
		x := &n.entries[i]
		if !x.portMatches(port) {
			continue
		}
		if (x.kind == hostAddr && x.addr == ip) || (x.kind == hostLocalhost && name == "localhost" && ip.IsLoopback()) {
			return true, x.rule
		}
	}
	return false, ruleNetwork
}

// specialPrefixes are the addresses that are not on the public Internet:
// this host, loopback, private networks (RFC 1918, CGNAT, ULA), link-local
// (where cloud metadata services listen), benchmarking, documentation,
// multicast, reserved and broadcast ranges.
var specialPrefixes = [...]netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("224.0.0.0/3"), // multicast, reserved, broadcast
	netip.MustParsePrefix("::/96"),       // unspecified, loopback, IPv4-compatible
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("fec0::/10"),
	netip.MustParsePrefix("ff00::/8"),
}

// embeddingPrefixes carry an IPv4 address inside an IPv6 one (NAT64 and
// 6to4); the byte offset says where. Such an address is as public as the
// IPv4 address it carries.
var embeddingPrefixes = [...]struct {
	prefix netip.Prefix
	offset int
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12},
	{netip.MustParsePrefix("2002::/16"), 2},
}

// publicAddr reports whether ip is a public unicast address.
func publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range specialPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	if ip.Is6() {
		b := ip.As16()
		for _, e := range embeddingPrefixes {
			if e.prefix.Contains(ip) {
				return publicAddr(netip.AddrFrom4([4]byte(b[e.offset : e.offset+4])))
			}
		}
	}
	return ip.IsValid()
}
