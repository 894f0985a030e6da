package policy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

func TestWidenable(t *testing.T) {
	dir := t.TempDir()
	doc, err := policy.ParseDocument([]byte("paths:\n  read: [\"" + dir + "/**\"]\n  write: [\"" + dir + "/w/**\"]\n  deny: [\"**/.env\"]\nshell_commands:\n  allow: [ls]\n  deny: [\"rm -rf\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	env := policy.Env{Protected: []string{dir + "/sessions"}}
	scope, err := policy.Compile(doc, env)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		call      string
		widenable bool
		want      []policy.Widening
	}{
		{"read outside", `{"tool":"read_file","args":{"path":"/etc/hostname"}}`, true, []policy.Widening{{Flag: "--read", Value: "/etc/hostname"}}},
		{"write outside", `{"tool":"write_file","args":{"path":"` + dir + `/x.txt","content":""}}`, true, []policy.Widening{{Flag: "--write", Value: dir + "/x.txt"}}},
		{"command not allowed", `{"tool":"shell","args":{"command":"git status"}}`, true, []policy.Widening{{Flag: "--allow-command", Value: "git status"}}},
		{"redirect", `{"tool":"shell","args":{"command":"ls > /var/tmp/out"}}`, true, []policy.Widening{{Flag: "--write", Value: "/var/tmp/out"}}},
		{"two widenings", `{"tool":"shell","args":{"command":"cat /etc/hostname"}}`, true, []policy.Widening{{Flag: "--allow-command", Value: "cat"}, {Flag: "--read", Value: "/etc/hostname"}}},
		{"paths.deny", `{"tool":"read_file","args":{"path":"` + dir + `/.env"}}`, false, nil},
		{"deny command", `{"tool":"shell","args":{"command":"rm -rf w"}}`, false, nil},
		{"protected root", `{"tool":"write_file","args":{"path":"` + dir + `/sessions/s/scope.yml","content":""}}`, false, nil},
		{"one hard denial among widenable", `{"tool":"shell","args":{"command":"ls /etc; rm -rf w"}}`, false, nil},
		{"parse error", `{"tool":"shell","args":{"command":"ls 'x"}}`, false, nil},
		{"allowed", `{"tool":"shell","args":{"command":"ls"}}`, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			call, err := policy.ParseCall([]byte(tc.call))
			if err != nil {
				t.Fatal(err)
			}
			call.Cwd = dir
			d := scope.Decide(call, env)
			if got := d.Widenable(); got != tc.widenable {
				t.Fatalf("Widenable() = %v, want %v (decision %+v)", got, tc.widenable, d)
			}
			got := d.Widenings()
			if len(got) != len(tc.want) {
				t.Fatalf("Widenings() = %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("Widenings() = %v, want %v", got, tc.want)
				}
			}
			// Observe lets exactly the widenable denials through, keeping
			// what enforce would have said.
			o := d.Observe()
			switch {
			case tc.widenable:
				if !o.Allowed || o.Observed == nil || o.Observed.Reason != d.Reason || o.Observed.Rule != d.Rule ||
					o.Observed.Resource != d.Resource || len(o.Violations) != len(d.Violations) {
					t.Fatalf("Observe() = %+v from %+v", o, d)
				}
				if policy.ObservedViolations(d.Violations) == nil {
					t.Fatalf("ObservedViolations(%+v) = nil", d.Violations)
				}
			default:
				if o.Allowed != d.Allowed || o.Observed != nil || o.Reason != d.Reason {
					t.Fatalf("Observe() changed a decision that is not widenable: %+v from %+v", o, d)
				}
				if !d.Allowed && policy.ObservedViolations(d.Violations) != nil {
					t.Fatalf("ObservedViolations let a hard denial through: %+v", d.Violations)
				}
			}
		})
	}
}

// TestWidenFlag: every widening flag parses back to itself, and decoding
// refuses any other word, so a grant or an entry naming one does not load.
func TestWidenFlag(t *testing.T) {
	for _, f := range []policy.WidenFlag{policy.WidenRead, policy.WidenWrite, policy.WidenCommand,
		policy.WidenRoamSubdirectory, policy.WidenRoamTag, policy.WidenRoamNodeID,
		policy.WidenHost, policy.WidenSocket, policy.WidenNetwork} {
		got, err := policy.ParseWidenFlag(f.String())
		if err != nil || got != f {
			t.Errorf("ParseWidenFlag(%q) = %q, %v", f, got, err)
		}
	}
	for _, s := range []string{"", "read", "--deny", "--deny-command", "--READ", "--read ", "--allow-hosts"} {
		if f, err := policy.ParseWidenFlag(s); err == nil {
			t.Errorf("ParseWidenFlag(%q) = %q, want an error", s, f)
		}
	}
	var ws []policy.Widening
	if err := json.Unmarshal([]byte(`[{"flag":"--read","value":"/etc/hostname"}]`), &ws); err != nil || ws[0].Flag != policy.WidenRead {
		t.Errorf("decode --read: %+v, %v", ws, err)
	}
	if err := json.Unmarshal([]byte(`[{"flag":"--deny","value":"/etc/**"}]`), &ws); err == nil {
		t.Errorf("decoded --deny as a widening: %+v", ws)
	}
}

// FuzzParseWidenFlag: what parses is a flag that prints as it was spelled,
// starts with -- and decodes from JSON as the same flag.
func FuzzParseWidenFlag(f *testing.F) {
	for _, s := range []string{"--read", "--write", "--allow-command", "--allow-socket", "--network", "--deny", "", "--read\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flag, err := policy.ParseWidenFlag(s)
		if err != nil {
			return
		}
		if flag.String() != s || !strings.HasPrefix(s, "--") {
			t.Fatalf("ParseWidenFlag(%q) = %q", s, flag)
		}
		var w policy.Widening
		data, _ := json.Marshal(policy.Widening{Flag: flag, Value: "v"})
		if err := json.Unmarshal(data, &w); err != nil || w.Flag != flag {
			t.Fatalf("round trip of %q: %+v, %v", s, w, err)
		}
	})
}
