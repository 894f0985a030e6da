// Package netproxy is the way out of a confined program's network
// namespace: the HTTP and SOCKS5 proxies and the DNS stub that the view's
// helper listens on inside the namespace, and that dial out on the host
// side once the scope allows the host and the address it resolves to. It
// reports every connection a call's programs attempt, and never imports
// gateway.
//
// The HTTP proxy's framing of a request is written here, not taken from
// net/http, because it is the security boundary: what the proxy reads as
// one request to one host must be what the server reads. So it
//
//   - serves one request per connection and tells both sides to close,
//     where net/http keeps connections alive and pools them: a second
//     request on a connection, to another host, would reach the first
//     host's server unchecked;
//   - refuses every head that can be read two ways (request smuggling):
//     two Content-Length fields, Transfer-Encoding other than chunked
//     alone or with Content-Length, folded lines, a CR or NUL inside a
//     line, a Host field that names another host than the target;
//   - passes on the exact bytes: the fields in their order and spelling
//     (net/http keeps them in a map, canonicalized) and a chunked body as
//     it came, its framing checked (net/http decodes and re-chunks it).
package netproxy

// Conn is one connection a call's programs attempted, as the call's result
// and its tools.org entry list it (docs/reference.md, The call and the decision; tools.org).
type Conn struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Allowed bool   `json:"allowed"`
	// Rule names what decided: the network entry that allowed it, or
	// "network" when no entry did.
	Rule string `json:"rule,omitempty"`
}
