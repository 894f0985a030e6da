package policy

import (
	"fmt"
	"strconv"
	"strings"
)

// hostWidening is the entry that allows host at port: the host alone
// for ports 80 and 443 (what a bare entry means), else host:port.
func hostWidening(host string, port int) Widening {
	name, addr, ok := canonHost(host)
	if !ok || port < 1 || port > 65535 {
		return Widening{}
	}
	v := name
	if addr.IsValid() {
		v = addr.String()
		if addr.Is6() && port != 80 && port != 443 {
			v = "[" + v + "]"
		}
	}
	if port != 80 && port != 443 {
		v += ":" + strconv.Itoa(port)
	}
	return Widening{Flag: WidenHost, Value: v}
}

// hostViolation is the denial of a connection to host:port that the
// network section does not allow; what says who connects (e.g. "curl
// connects to"). A host that is not a valid name or address carries no
// widening: no entry could allow it.
func (n Network) hostViolation(host string, port int, what string) Violation {
	shown := host
	if port > 0 {
		shown = joinHostPort(host, port)
	}
	v := Violation{Reason: ReasonHostNotInScope, Resource: shown, Rule: ruleNetwork}
	if n.ceilingRefuses(host, port) {
		v.Reason, v.Rule = ReasonManaged, RuleManagedNetwork
		v.Message = fmt.Sprintf("%s %s, which is beyond %s of the machine's managed policy; no scope change can allow it", what, quoteArg(shown), RuleManagedNetwork)
		return v
	}
	w := hostWidening(host, port)
	if w.Flag == "" {
		v.Message = fmt.Sprintf("%s %s, which is not a host name or IP address that network of this session's scope can allow", what, quoteArg(shown))
		return v
	}
	v.Widen = []Widening{w}
	if n.Mode() == NetworkNone {
		v.Message = fmt.Sprintf("%s %s, but this session's scope allows no network (network: none); the user can allow the host with: %s", what, quoteArg(shown), ExpandHint(w))
		return v
	}
	v.Message = fmt.Sprintf("%s %s, which is not in network of this session's scope; the user can allow it with: %s", what, quoteArg(shown), ExpandHint(w))
	return v
}

// checkHost returns the violation of a connection to host:port named
// literally in a command, or nil when network allows it.
func (n Network) checkHost(host string, port int, what string) []Violation {
	if n.Mode() == NetworkAny {
		return nil
	}
	if ok, _ := n.AllowHost(host, port); ok {
		return nil
	}
	return []Violation{n.hostViolation(host, port, what)}
}

// anyHost refuses, unless network is any, a program that connects to
// whatever host another party names (ssh -R without a destination); what
// says who connects.
func (c *checker) anyHost(what string) {
	if c.s.net.Mode() == NetworkAny {
		return
	}
	if c.s.net.ceiling != nil && c.s.net.ceiling.ownMode() != NetworkAny {
		c.add(Violation{Reason: ReasonManaged, Resource: anyDest, Rule: RuleManagedNetwork,
			Message: fmt.Sprintf("%s any host the remote side asks for (a SOCKS proxy), which is beyond %s of the machine's managed policy; no scope change can allow it", what, RuleManagedNetwork)})
		return
	}
	w := Widening{Flag: WidenNetwork, Value: NetworkAny.String()}
	c.add(Violation{Reason: ReasonHostNotInScope, Resource: anyDest, Rule: ruleNetwork, Widen: []Widening{w},
		Message: fmt.Sprintf("%s any host the remote side asks for (a SOCKS proxy), which only network: any allows; the user can allow it with: %s", what, ExpandHint(w))})
}

// joinHostPort writes host:port, bracketing an IPv6 address.
func joinHostPort(host string, port int) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// DecideHost decides a connection an agent's own tool makes to host:port
// (Claude Code's WebFetch): allowed when network allows the host, else
// host_not_in_scope with the --allow-host widening; what names who
// connects ("WebFetch fetches").
func (s *Scope) DecideHost(tool, host string, port int, what string) Decision {
	if ok, rule := s.net.AllowHost(host, port); ok {
		d := Allow(tool)
		d.Rule, d.Resource = rule, joinHostPort(host, port)
		return d
	}
	return Deny(tool, s.net.hostViolation(host, port, what))
}
