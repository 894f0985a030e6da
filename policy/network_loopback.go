package policy

import "slices"

// ownLoopbackPorts returns the ports of the list's entries that name this
// host's loopback (localhost, 127.0.0.1, ::1 and the like), sorted, 80
// and 443 for an entry without a port. Programs that never send a
// loopback destination to a proxy (Go's HTTP client, most NO_PROXY
// defaults) reach these through listeners at the same ports in their
// network namespace.
func (n Network) ownLoopbackPorts() []int {
	if n.mode != NetworkList {
		return nil
	}
	var ports []int
	for _, e := range n.entries {
		if e.kind != hostLocalhost && !(e.kind == hostAddr && e.addr.IsLoopback()) {
			continue
		}
		if e.port == 0 {
			ports = append(ports, 80, 443)
		} else {
			ports = append(ports, e.port)
		}
	}
	slices.Sort(ports)
	return slices.Compact(ports)
}
