package learn_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/learn"
	"github.com/scopegate/scopegate/policy"
)

// FuzzSuggest reads tools.org text (arbitrary, plus entries built from
// arbitrary paths) as scope suggest does and checks, with policy's own
// matcher, that no suggestion covers a hard-denied path: with the scope
// the suggestions make, the protected roots and host secrets stay
// unreadable, no proposed path is one paths.deny denies, and neither the
// filesystem root nor the home directory is proposed whole.
func FuzzSuggest(f *testing.F) {
	f.Add("", "/srv/data/a", "/srv/data/b", "/srv/data/c", uint8(0))
	f.Add(entry("X", audit.DecisionObserved, `[{"flag":"--read","value":"/home/u/.gptel/sessions/s/scope.yml"}]`), "/home/u/a", "/home/u/b", "/home/u/c", uint8(0))
	f.Add("", "/home/u/.gptel/x", "/home/u/.gptel/y", "/home/u/.gptel/z", uint8(1))
	f.Add("", "/etc/ssh/a", "/etc/ssh/b", "/etc/ssh/c", uint8(0))
	f.Add("", "/home/u/proj/.env", "/home/u/**", "/**", uint8(2))
	f.Add("", "git push", "sudo", "curl", uint8(3))
	f.Add(entry("Y", audit.DecisionDenied, `[{"flag":"--write","value":"/home/u/.config/scopegate/presets.yml"},{"flag":"--read","value":"/etc/**"}]`), "/", "/etc", "/home", uint8(4))
	f.Fuzz(func(t *testing.T, org, a, b, c string, kind uint8) {
		flagsOf := []policy.WidenFlag{policy.WidenRead, policy.WidenWrite, policy.WidenCommand, policy.WidenHost}
		var built strings.Builder
		for i, v := range []string{a, b, c} {
			ws, _ := json.Marshal([]policy.Widening{{Flag: flagsOf[(int(kind)>>(2*i))%4], Value: v}})
			built.WriteString(entry("F"+string(rune('a'+i)), audit.DecisionObserved, string(ws)))
		}
		es, err := audit.Parse(strings.NewReader(org+"\n"+built.String()), audit.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		o := opts()
		sugs, _ := learn.Suggest(learn.Calls(es), o)
		var doc policy.Document
		doc.Paths.Deny = o.Deny
		for _, s := range sugs {
			switch s.Flag {
			case "--read":
				doc.Paths.Read = append(doc.Paths.Read, s.Value)
			case "--write":
				doc.Paths.Write = append(doc.Paths.Write, s.Value)
			default:
				continue
			}
			base, glob := strings.CutSuffix(s.Value, "/**")
			if base == "" || base == "/" || base == o.Home || glob && strings.HasPrefix(o.Home+"/", base+"/") {
				t.Fatalf("proposed %s %s", s.Flag, s.Value)
			}
		}
		env := policy.Env{Protected: o.Protected, Home: o.Home, Cwd: "/"}
		scope, err := policy.Compile(doc, env)
		if err != nil {
			t.Fatalf("suggestions make no valid scope: %v (%+v)", err, sugs)
		}
		hard := append([]string{"/home/u/.gptel/sessions/s/branches/main/scope.yml", "/home/u/.config/scopegate/presets.yml",
			"/home/u/.ssh/id_rsa", "/home/u/proj/.env", "/home/u/.bashrc"}, o.Secrets...)
		hard = append(hard, o.Protected...)
		for _, p := range hard {
			if vs := scope.CheckPath(p, policy.AccessRead, "/", env); len(vs) == 0 {
				t.Fatalf("the suggestions %+v let %s be read", sugs, p)
			}
		}
		for _, s := range sugs {
			if s.Flag != "--read" && s.Flag != "--write" {
				continue
			}
			for _, v := range scope.CheckPath(strings.TrimSuffix(s.Value, "/**"), policy.AccessRead, "/", env) {
				if v.Reason == policy.ReasonPathDenied {
					t.Fatalf("proposed %s %s, which %s denies", s.Flag, s.Value, v.Rule)
				}
			}
			if len(s.Calls) == 0 {
				t.Fatalf("suggestion %+v names no call", s)
			}
		}
	})
}
