// Package netproxy is the way out of a confined program's network
// namespace: the HTTP and SOCKS5 proxies and the DNS stub that the view's
// helper listens on inside the namespace, and that dial out on the host
// side once the scope allows the host and the address it resolves to. It
// reports every connection a call's programs attempt, and never imports
// gateway.
package netproxy

// Conn is one connection a call's programs attempted, as the call's result
// and its tools.org entry list it (CONTRACT §3, §7).
type Conn struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Allowed bool   `json:"allowed"`
	// Rule names what decided: the network entry that allowed it, or
	// "network" when no entry did.
	Rule string `json:"rule,omitempty"`
}
