package policy

import (
	"fmt"
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
		"http_proxy = http://proxy.example:3128", "HTTPS-Proxy=evil.example", "robots=off", "https://doh.example/dns-query",
		"9000:evil.example:80", "*:9000", "[::1]:9000:[2001:db8::7]:80", "/tmp/r.sock:host:22", "9000:/run/app.sock",
		"9000:ev\\il.example:80", "9000:${H}:80", "evil.example:22", "/run/app.sock", "[2001:db8::7]:22"} {
		for k := connRequest; k <= connSSHStdio; k++ {
			f.Add(uint8(k), s)
		}
	}
	reqs := []target{{"req.example", 443}}
	f.Fuzz(func(t *testing.T, k uint8, v string) {
		kind := connKind(k%uint8(connSSHStdio)) + 1
		ts, ok := connTargets(kind, v, reqs)
		if !ok {
			return
		}
		for _, tg := range ts {
			if tg.host == "" {
				t.Fatalf("%d %q: empty host in %v", kind, v, ts)
			}
			if tg.host == anyDest && kind == connSSHRemote {
				continue // a SOCKS proxy: every host
			}
			if !strings.Contains(strings.ToLower(strings.ReplaceAll(v, "\\", "")), strings.ToLower(strings.ReplaceAll(tg.host, "\\", ""))) && !(kind == connConnectTo && tg.host == "req.example") {
				t.Fatalf("%d %q: host %q is not in the value", kind, v, tg.host)
			}
			if tg.port < 0 || tg.port > 65535 {
				t.Fatalf("%d %q: port %d", kind, v, tg.port)
			}
		}
	})
}

// FuzzSSHConfigArgs checks the splitting of an ssh_config keyword's
// arguments: every argument is made of bytes of the value, without
// blanks unless they were quoted or escaped; none panics.
func FuzzSSHConfigArgs(f *testing.F) {
	for _, s := range []string{"9000 evil.example:80", `"9000" 'evil.example:80'`, `a\ b "c d"`, "x #comment", `"unterminated`, "", "\t a \t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		args, ok := sshConfigArgs(v)
		if !ok {
			return
		}
		for _, a := range args {
			for i := 0; i < len(a); i++ {
				if strings.IndexByte(v, a[i]) < 0 {
					t.Fatalf("%q: argument %q has a byte not in the value", v, a)
				}
			}
			if strings.ContainsAny(a, " \t") && !strings.ContainsAny(v, `"'\`) {
				t.Fatalf("%q: argument %q holds a blank", v, a)
			}
		}
	})
}

// TestSSHForwardTargets checks the reading of ssh's -R and -W against
// ssh(1)'s forms.
func TestSSHForwardTargets(t *testing.T) {
	for _, tc := range []struct {
		k    connKind
		v    string
		want []target
		ok   bool
	}{
		{connSSHRemote, "9000:evil.example:80", []target{{"evil.example", 80}}, true},
		{connSSHRemote, "127.0.0.1:9000:evil.example:80", []target{{"evil.example", 80}}, true},
		{connSSHRemote, "[::1]:9000:[2001:db8::7]:80", []target{{"2001:db8::7", 80}}, true},
		{connSSHRemote, "/tmp/r.sock:evil.example:80", []target{{"evil.example", 80}}, true},
		{connSSHRemote, "9000:ev\\il.example\\:x:80", []target{{"evil.example:x", 80}}, true},
		{connSSHRemote, "9000:/run/app.sock", nil, true},
		{connSSHRemote, "/tmp/r.sock:/run/app.sock", nil, true},
		{connSSHRemote, "localhost:9000:/run/app.sock", nil, true},
		{connSSHRemote, "9000", []target{{anyDest, 0}}, true},
		{connSSHRemote, "*:9000", []target{{anyDest, 0}}, true},
		{connSSHRemote, "9000:evil.example:http", nil, false},
		{connSSHRemote, "9000:${H}:80", nil, false},
		{connSSHRemote, "a:b:c:80:e", nil, false},
		{connSSHRemote, "[::1:9000:h:80", nil, false},
		{connSSHRemote, "9000::80", nil, false},
		{connSSHStdio, "evil.example:22", []target{{"evil.example", 22}}, true},
		{connSSHStdio, "[2001:db8::7]:22", []target{{"2001:db8::7", 22}}, true},
		{connSSHStdio, "/run/app.sock", nil, true},
		{connSSHStdio, "evil.example", nil, false},
		{connSSHStdio, "evil.example:0", nil, false},
	} {
		got, ok := connTargets(tc.k, tc.v, nil)
		if ok != tc.ok || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%d %q: %v %v, want %v %v", tc.k, tc.v, got, ok, tc.want, tc.ok)
		}
	}
}
