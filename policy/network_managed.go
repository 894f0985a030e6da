package policy

import (
	"net/netip"
	"slices"
)

// A network section within the managed network ceiling (managed.go): a
// connection must be allowed by both, and what the ceiling refuses is
// refused with RuleManagedNetwork whatever the section says. So a scope
// saying any under a ceiling that lists hosts runs through the proxy with
// the ceiling's list, and a unix socket is reachable only where both name
// it. Every method below answers for the section within its ceiling; the
// own* methods answer for the section alone.

// within returns n bounded by the ceiling c.
func (n Network) within(c *Network) Network {
	if c != nil && c.ceiling != nil {
		c = &Network{mode: c.mode, entries: c.entries, sockets: c.sockets}
	}
	n.ceiling = c
	return n
}

// Mode is none, any or list: how the section within its ceiling lets
// programs connect. A list without host entries is none, one holding the
// word any is any; under a ceiling, any only when both say any, none when
// either does, else list.
func (n Network) Mode() NetworkMode {
	own := n.ownMode()
	if n.ceiling == nil {
		return own
	}
	c := n.ceiling.ownMode()
	switch {
	case own == NetworkNone || c == NetworkNone:
		return NetworkNone
	case own == NetworkAny && c == NetworkAny:
		return NetworkAny
	}
	return NetworkList
}

// AllowHost decides a host name or IP literal and port before any
// resolution. rule is the entry that allowed it, "network" when the
// section refuses it, RuleManagedNetwork when the ceiling does.
func (n Network) AllowHost(host string, port int) (allowed bool, rule string) {
	if n.ceiling != nil {
		if ok, _ := n.ceiling.ownAllowHost(host, port); !ok {
			return false, RuleManagedNetwork
		}
	}
	return n.ownAllowHost(host, port)
}

// AllowAddr decides the address a permitted host resolved to, just before
// it is dialed. A public address is allowed when the host is; a loopback,
// private, link-local or other non-public address only when an entry names
// it (the address itself at that port, or localhost for a loopback address
// that localhost resolved to); an IP literal only as itself. Under a
// ceiling, the ceiling must allow the address as well.
func (n Network) AllowAddr(host string, port int, ip netip.Addr) (allowed bool, rule string) {
	if n.ceiling != nil {
		if ok, _ := n.ceiling.ownAllowAddr(host, port, ip); !ok {
			return false, RuleManagedNetwork
		}
	}
	return n.ownAllowAddr(host, port, ip)
}

// Sockets returns the paths of the unix sockets the section names and its
// ceiling allows, in the order written.
func (n Network) Sockets() []string {
	out := n.ownSockets()
	if n.ceiling == nil {
		return out
	}
	return slices.DeleteFunc(out, func(p string) bool {
		ok, _ := n.ceiling.ownAllowSocket(p)
		return !ok
	})
}

// AllowSocket decides a connection to the unix socket at path (absolute,
// clean): allowed when an entry names it and the ceiling does too. rule is
// that entry, "network", or RuleManagedNetwork.
func (n Network) AllowSocket(path string) (allowed bool, rule string) {
	if n.ceiling != nil {
		if ok, _ := n.ceiling.ownAllowSocket(path); !ok {
			return false, RuleManagedNetwork
		}
	}
	return n.ownAllowSocket(path)
}

// LoopbackPorts returns the ports of the list's entries that name this
// host's loopback (localhost, 127.0.0.1, ::1 and the like), sorted, 80
// and 443 for an entry without a port. Programs that never send a
// loopback destination to a proxy (Go's HTTP client, most NO_PROXY
// defaults) reach these through listeners at the same ports in their
// network namespace. Under a ceiling, only the ports it names too (all it
// names when the section says any).
func (n Network) LoopbackPorts() []int {
	if n.ceiling == nil {
		return n.ownLoopbackPorts()
	}
	ceiling := n.ceiling.ownLoopbackPorts()
	if n.ownMode() == NetworkAny {
		return ceiling
	}
	return slices.DeleteFunc(n.ownLoopbackPorts(), func(p int) bool { return !slices.Contains(ceiling, p) })
}

// ceilingRefuses reports whether the ceiling refuses host:port.
func (n Network) ceilingRefuses(host string, port int) bool {
	if n.ceiling == nil {
		return false
	}
	ok, _ := n.ceiling.ownAllowHost(host, port)
	return !ok
}

// coversEntry reports whether every connection the network entry h (a
// host entry of scope.yml) allows, this section allows too.
func (n *Network) coversEntry(h string) bool {
	switch n.ownMode() {
	case NetworkAny:
		return true
	case NetworkNone:
		return false
	}
	e, err := parseHostEntry(h)
	if err != nil {
		return false
	}
	for i := range n.entries {
		if n.entries[i].covers(e) {
			return true
		}
	}
	return false
}

// covers reports whether entry c admits every host and port entry e does.
func (c *hostEntry) covers(e hostEntry) bool {
	switch {
	case c.port == 0 && e.port != 0 && e.port != 80 && e.port != 443:
		return false
	case c.port != 0 && e.port != c.port:
		return false
	}
	switch e.kind {
	case hostAddr:
		return c.kind == hostAddr && c.addr == e.addr
	case hostLocalhost:
		return c.kind == hostLocalhost
	case hostExact:
		return c.kind == hostExact && c.name == e.name ||
			c.kind == hostSuffix && len(e.name) > len(c.name) && e.name[len(e.name)-len(c.name):] == c.name
	case hostSuffix:
		return c.kind == hostSuffix && len(e.name) >= len(c.name) && e.name[len(e.name)-len(c.name):] == c.name
	}
	return false
}
