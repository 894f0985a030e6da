package learn_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/learn"
	"github.com/scopegate/scopegate/policy"
)

// opts are the hard denials of the tests' branch.
func opts() learn.Options {
	return learn.Options{
		Deny:         []string{"**/.git/**", "**/.env", "**/.ssh/**", "**/.aws/**"},
		Protected:    []string{"/home/u/.gptel/sessions", "/home/u/.config/scopegate"},
		Secrets:      []string{"/etc/shadow", "/etc/ssh/ssh_host_rsa_key"},
		DenyCommands: []string{"rm -rf", "git push", "sudo"},
		Home:         "/home/u",
		ProjectRoots: []string{"/home/u/proj"},
	}
}

func w(flag policy.WidenFlag, value string) policy.Widening {
	return policy.Widening{Flag: flag, Value: value}
}

// calls makes one call per widening, ids c1, c2…
func calls(ws ...policy.Widening) []learn.Call {
	var out []learn.Call
	for i, x := range ws {
		out = append(out, learn.Call{ID: fmt.Sprintf("c%d", i+1), Widen: []policy.Widening{x}})
	}
	return out
}

func flags(sugs []learn.Suggestion) []string {
	var out []string
	for _, s := range sugs {
		out = append(out, s.Flag.String()+" "+s.Value)
	}
	return out
}

func TestSuggestRules(t *testing.T) {
	cases := []struct {
		name    string
		calls   []learn.Call
		want    []string
		skipped []string
	}{
		{"files as named below the threshold",
			calls(w("--read", "/srv/data/a.txt"), w("--read", "/srv/data/b.txt")),
			[]string{"--read /srv/data/a.txt", "--read /srv/data/b.txt"}, nil},
		{"a directory glob from three calls below it",
			calls(w("--read", "/srv/data/a.txt"), w("--read", "/srv/data/b.txt"), w("--read", "/srv/data/sub/c.txt")),
			[]string{"--read /srv/data/**"}, nil},
		{"three reads of one file are one file",
			append(calls(w("--read", "/srv/data/a.txt"), w("--read", "/srv/data/a.txt")), learn.Call{ID: "c9", Widen: []policy.Widening{w("--read", "/srv/data/a.txt")}}),
			[]string{"--read /srv/data/a.txt"}, nil},
		{"the deepest directory wins",
			calls(w("--read", "/srv/data/x/a"), w("--read", "/srv/data/x/b"), w("--read", "/srv/data/x/c"), w("--read", "/srv/data/y")),
			[]string{"--read /srv/data/x/**", "--read /srv/data/y"}, nil},
		{"never a directory directly below /",
			calls(w("--read", "/srv/a"), w("--read", "/srv/b"), w("--read", "/srv/c")),
			[]string{"--read /srv/a", "--read /srv/b", "--read /srv/c"}, nil},
		{"never above the project root for files inside it",
			calls(w("--write", "/home/u/proj/a"), w("--write", "/home/u/proj/b"), w("--write", "/home/u/other/c")),
			[]string{"--write /home/u/other/c", "--write /home/u/proj/a", "--write /home/u/proj/b"}, nil},
		{"the project root itself may be the glob",
			calls(w("--write", "/home/u/proj/a"), w("--write", "/home/u/proj/b"), w("--write", "/home/u/proj/d/c")),
			[]string{"--write /home/u/proj/**"}, nil},
		{"never the home directory whole",
			calls(w("--read", "/home/u/a"), w("--read", "/home/u/b"), w("--read", "/home/u/c"), w("--read", "/home/u/**")),
			[]string{"--read /home/u/a", "--read /home/u/b", "--read /home/u/c"}, []string{"--read /home/u/**"}},
		{"never the filesystem root",
			calls(w("--read", "/**")),
			nil, []string{"--read /**"}},
		{"never what paths.deny covers",
			calls(w("--read", "/home/u/proj/.env"), w("--read", "/srv/repo/.git/config"), w("--read", "/home/u/.ssh/id_rsa")),
			nil, []string{"--read /home/u/.ssh/id_rsa", "--read /home/u/proj/.env", "--read /srv/repo/.git/config"}},
		{"never a protected root or inside one",
			calls(w("--write", "/home/u/.gptel/sessions/s/branches/main/scope.yml"), w("--read", "/home/u/.config/scopegate/presets.yml")),
			nil, []string{"--read /home/u/.config/scopegate/presets.yml", "--write /home/u/.gptel/sessions/s/branches/main/scope.yml"}},
		{"never a directory holding a protected root",
			calls(w("--read", "/home/u/.gptel/**")),
			nil, []string{"--read /home/u/.gptel/**"}},
		{"never a host secret nor a directory holding one",
			calls(w("--read", "/etc/shadow"), w("--read", "/etc/ssh/**")),
			nil, []string{"--read /etc/shadow", "--read /etc/ssh/**"}},
		{"a directory glob that would hold a secret stays files",
			calls(w("--read", "/etc/ssh/a"), w("--read", "/etc/ssh/b"), w("--read", "/etc/ssh/c")),
			[]string{"--read /etc/ssh/a", "--read /etc/ssh/b", "--read /etc/ssh/c"}, nil},
		{"a write covers the read of the same file",
			calls(w("--read", "/srv/out/a"), w("--write", "/srv/out/a")),
			[]string{"--write /srv/out/a"}, nil},
		{"commands by program name",
			calls(w("--allow-command", "curl"), w("--allow-command", "go test"), w("--allow-command", "go build")),
			[]string{"--allow-command curl", "--allow-command go"}, nil},
		{"program and subcommand where a deny entry names the program",
			calls(w("--allow-command", "git status"), w("--allow-command", "git log")),
			[]string{"--allow-command git log", "--allow-command git status"}, nil},
		{"never a command a deny entry covers",
			calls(w("--allow-command", "sudo"), w("--allow-command", "git push")),
			nil, []string{"--allow-command git push", "--allow-command sudo"}},
		{"hosts as used, never the whole network",
			calls(w("--allow-host", "proxy.golang.org:443"), w("--allow-host", "github.com"), w("--network", "any")),
			[]string{"--allow-host github.com", "--allow-host proxy.golang.org:443"}, []string{"--network any"}},
		{"sockets as used",
			calls(w("--allow-socket", "/run/docker.sock"), w("--allow-socket", "/run/docker.sock")),
			[]string{"--allow-socket /run/docker.sock"}, nil},
		{"org-roam entries as used",
			calls(w("--roam-tag", "work"), w("--roam-subdirectory", "notes/**")),
			[]string{"--roam-subdirectory notes/**", "--roam-tag work"}, nil},
		{"escaped names stay escaped",
			calls(w("--read", "/srv/data/a[*].txt")),
			[]string{"--read /srv/data/a[*].txt"}, nil},
		{"patterns that are not literal paths are left out",
			calls(w("--read", "/srv/*/x"), w("--read", "relative/x")),
			nil, []string{"--read /srv/*/x", "--read relative/x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sugs, skipped := learn.Suggest(tc.calls, opts())
			got := flags(sugs)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("suggested %q, want %q", got, tc.want)
			}
			var sk []string
			for _, s := range skipped {
				if s.Why == "" || len(s.Calls) == 0 {
					t.Errorf("skipped %+v without a reason or calls", s)
				}
				sk = append(sk, s.Flag.String()+" "+s.Value)
			}
			slices.Sort(sk)
			if !slices.Equal(sk, tc.skipped) {
				t.Errorf("skipped %q, want %q", sk, tc.skipped)
			}
		})
	}
}

func TestSuggestCalls(t *testing.T) {
	in := []learn.Call{
		{ID: "a", Widen: []policy.Widening{w("--read", "/srv/d/1"), w("--allow-command", "tac")}},
		{ID: "b", Widen: []policy.Widening{w("--read", "/srv/d/2")}},
		{ID: "c", Widen: []policy.Widening{w("--read", "/srv/d/3"), w("--allow-command", "tac")}},
	}
	sugs, _ := learn.Suggest(in, opts())
	want := map[string][]string{"--read /srv/d/**": {"a", "b", "c"}, "--allow-command tac": {"a", "c"}}
	if len(sugs) != len(want) {
		t.Fatalf("suggestions %+v", sugs)
	}
	for _, s := range sugs {
		if !slices.Equal(s.Calls, want[s.Flag.String()+" "+s.Value]) {
			t.Errorf("%s %s: calls %v, want %v", s.Flag, s.Value, s.Calls, want[s.Flag.String()+" "+s.Value])
		}
	}
}

func TestSuggestCovered(t *testing.T) {
	o := opts()
	o.Covered = func(x policy.Widening) bool { return x.Value == "tac" }
	sugs, _ := learn.Suggest(calls(w("--allow-command", "tac"), w("--allow-command", "rev")), o)
	if got := flags(sugs); !slices.Equal(got, []string{"--allow-command rev"}) {
		t.Fatalf("got %q", got)
	}
}

// A widening the managed policy would refuse is never proposed, and is
// listed with the rule it reaches beyond.
func TestSuggestRefused(t *testing.T) {
	o := opts()
	o.Refused = func(x policy.Widening) string {
		if x.Value == "/srv/data/x" {
			return "managed.paths.ceiling.read"
		}
		return ""
	}
	sugs, skipped := learn.Suggest(calls(w("--read", "/srv/data/x"), w("--read", "/home/u/proj/a")), o)
	if got := flags(sugs); !slices.Equal(got, []string{"--read /home/u/proj/a"}) {
		t.Fatalf("got %q", got)
	}
	if len(skipped) != 1 || skipped[0].Value != "/srv/data/x" || !strings.Contains(skipped[0].Why, "managed.paths.ceiling.read") {
		t.Fatalf("skipped %+v", skipped)
	}
}

func TestSuggestMinFiles(t *testing.T) {
	o := opts()
	o.MinFiles = 2
	sugs, _ := learn.Suggest(calls(w("--read", "/srv/d/1"), w("--read", "/srv/d/2")), o)
	if got := flags(sugs); !slices.Equal(got, []string{"--read /srv/d/**"}) {
		t.Fatalf("got %q", got)
	}
}

func TestCalls(t *testing.T) {
	org := entry("A", audit.DecisionObserved, `[{"flag":"--allow-command","value":"tac"}]`) +
		entry("A", audit.DecisionObserved, `[{"flag":"--allow-command","value":"tac"},{"flag":"--write","value":"/srv/o"}]`) +
		entry("B", audit.DecisionDenied, `[{"flag":"--read","value":"/srv/i"}]`) +
		entry("C", audit.DecisionDenied, "") +
		entry("D", audit.DecisionAllowed, "")
	es, err := audit.Parse(strings.NewReader(org), audit.Filter{Warn: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	got := learn.Calls(es)
	if len(got) != 2 || got[0].ID != "A" || len(got[0].Widen) != 2 || got[1].ID != "B" {
		t.Fatalf("Calls = %+v", got)
	}
}

// entry is the tools.org text of one entry with a :WIDEN: drawer line.
func entry(id, decision, widen string) string {
	s := "* " + strings.ToUpper(decision) + " shell: x\n:PROPERTIES:\n:CALL_ID:  " + id + "\n:TIME:     2026-11-27T10:00:00.000Z\n:TOOL:     shell\n:DECISION: " + decision + "\n"
	if widen != "" {
		s += ":WIDEN:    " + widen + "\n"
	}
	return s + ":END:\n** Arguments\n#+begin_src json\n{\"command\":\"x\"}\n#+end_src\n"
}
