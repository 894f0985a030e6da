package policy

import (
	"strings"
	"testing"
)

// FuzzConnTargets checks the readers of connection options: a value they
// read gives hosts written in it (or the request's own host, for an empty
// field of --connect-to), with a port in range; none panics.
func FuzzConnTargets(f *testing.F) {
	for _, s := range []string{"http://u:p@proxy.example:3128", "socks5h://localhost/run/s.sock", "[2001:db8::1]:1080", "",
		"10.0.0.53,8.8.8.8:5353", "github.com:443:evil.example:8443", "::evil.example:", ":443::25", ":::", "a:b:c:d",
		"+github.com:443:[2001:db8::1],203.0.113.9", "-github.com:443", "*:443:2001:db8::6", "[::1]:443:127.0.0.1",
		"http_proxy = http://proxy.example:3128", "HTTPS-Proxy=evil.example", "robots=off", "https://doh.example/dns-query"} {
		for k := connRequest; k <= connWgetrc; k++ {
			f.Add(uint8(k), s)
		}
	}
	reqs := []target{{"req.example", 443}}
	f.Fuzz(func(t *testing.T, k uint8, v string) {
		kind := connKind(k%uint8(connWgetrc)) + 1
		ts, ok := connTargets(kind, v, reqs)
		if !ok {
			return
		}
		for _, tg := range ts {
			if tg.host == "" {
				t.Fatalf("%d %q: empty host in %v", kind, v, ts)
			}
			if !strings.Contains(strings.ToLower(v), strings.ToLower(tg.host)) && !(kind == connConnectTo && tg.host == "req.example") {
				t.Fatalf("%d %q: host %q is not in the value", kind, v, tg.host)
			}
			if tg.port < 0 || tg.port > 65535 {
				t.Fatalf("%d %q: port %d", kind, v, tg.port)
			}
		}
	})
}
