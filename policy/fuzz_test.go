package policy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/scopegate/scopegate/policy"
)

// fuzzAllow is the allow list of the shell fuzz target.
var fuzzAllow = []string{"ls", "cat", "grep", "git", "echo"}

// shellBuiltins are the names the checker lets through without an allow entry.
var shellBuiltins = map[string]bool{"true": true, "false": true, ":": true, "echo": true, "test": true, "[": true,
	"pwd": true, "shift": true, "exit": true, "return": true, "break": true, "continue": true, "wait": true,
	"type": true, "unset": true, "umask": true, "ulimit": true, "times": true, "jobs": true, "fg": true, "bg": true,
	"disown": true, "dirs": true, "popd": true, "caller": true, "shopt": true, "set": true, "help": true,
	"logout": true, "suspend": true, "read": true, "printf": true, "mapfile": true, "readarray": true,
	"getopts": true, "cd": true, "pushd": true, "trap": true, "exec": true, "command": true, "builtin": true,
	"hash": true, "export": true, "declare": true, "typeset": true, "local": true, "readonly": true, "let": true}

func FuzzShellDecide(f *testing.F) {
	for _, s := range []string{"ls -la | grep x", "cat README.md", "rm -rf /", "git log; curl x | sh",
		"echo $(cat /etc/passwd)", "f() { rm x; }; f", "x=rm; $x -rf", "ls > /tmp/x", "{rm,-rf,/}", "$'\\x72\\x6d' x",
		"cat <(rm x)", "bash -c 'rm x'", "git -c core.pager=sh log", "find . -exec rm {} ;", "env rm x"} {
		f.Add(s)
	}
	dir := f.TempDir()
	sc, err := policy.Compile(policy.Document{
		Paths: policy.PathRules{Read: []string{dir + "/**"}, Write: []string{dir + "/**"}},
		Shell: policy.ShellRules{Allow: fuzzAllow},
	}, policy.Env{})
	if err != nil {
		f.Fatal(err)
	}
	allowed := map[string]bool{}
	for _, a := range fuzzAllow {
		allowed[a] = true
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		d := sc.Decide(policy.Call{Tool: policy.ToolShell, Args: args, Cwd: dir}, policy.Env{})
		if !d.Allowed {
			if d.Message == "" || strings.ContainsAny(d.Message, "\n\r") {
				t.Fatalf("bad denial message %q", d.Message)
			}
			return
		}
		// Property: an allowed command's tree holds only literal programs
		// that are allowed, builtins, or functions it defines. (The command
		// checked is the one the JSON call carries.)
		var sent policy.ShellArgs
		if err := json.Unmarshal(args, &sent); err != nil {
			t.Fatal(err)
		}
		cmd = sent.Command
		file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
		if err != nil {
			t.Fatalf("allowed a command that does not parse: %v", err)
		}
		funcs := map[string]bool{}
		syntax.Walk(file, func(n syntax.Node) bool {
			if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name != nil {
				funcs[fd.Name.Value] = true
			}
			return true
		})
		syntax.Walk(file, func(n syntax.Node) bool {
			ce, ok := n.(*syntax.CallExpr)
			if !ok || len(ce.Args) == 0 {
				return true
			}
			i := 0
			w := ce.Args[0]
			lit := literalWord(w)
			// exec, command and builtin run the word after their options.
			for (lit == "exec" || lit == "command" || lit == "builtin") && i+1 < len(ce.Args) {
				i++
				for i < len(ce.Args) && strings.HasPrefix(literalWord(ce.Args[i]), "-") {
					i++
				}
				if i >= len(ce.Args) {
					return true
				}
				w = ce.Args[i]
				lit = literalWord(w)
			}
			if lit == "" {
				t.Fatalf("allowed %q: program word %q is not a plain literal", cmd, printNode(w))
			}
			base := filepath.Base(lit)
			if !allowed[base] && !shellBuiltins[lit] && !funcs[lit] {
				t.Fatalf("allowed %q: runs %q", cmd, lit)
			}
			return true
		})
	})
}

// literalWord returns a word's value when it is made only of literal text
// and quotes (decoded as bash would: quote removal, $'…'), else "".
func literalWord(w *syntax.Word) string {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return ""
				}
			}
		default:
			return ""
		}
	}
	s, err := expand.Literal(&expand.Config{}, w)
	if err != nil {
		return ""
	}
	return s
}

func printNode(n syntax.Node) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, n)
	return b.String()
}

func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"README.md", "../x", "/etc/passwd", "link/passwd", "a/../../b", "~/x", "loop",
		"in/../../outside/x", "./././README.md", "dir/", "nul\x00x", "\xff", ""} {
		f.Add(s)
	}
	root := f.TempDir()
	proj := filepath.Join(root, "proj")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{proj + "/in", outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(proj, "README.md"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(outside, "x"), []byte("x"), 0o644)
	os.Symlink(outside, filepath.Join(proj, "link"))
	os.Symlink("loop", filepath.Join(proj, "loop"))
	os.Symlink("../outside/x", filepath.Join(proj, "in", "rel"))
	env := policy.Env{Home: outside}
	sc, err := policy.Compile(policy.Document{Paths: policy.PathRules{Read: []string{proj + "/**"}, Write: []string{proj + "/**"}}}, env)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		for _, access := range []policy.Access{policy.AccessRead, policy.AccessWrite} {
			vs := sc.CheckPath(p, access, proj, env)
			if len(vs) > 0 {
				continue
			}
			// Property: the OS resolves an allowed path inside proj.
			abs := p
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(proj, p)
			}
			real := resolveExisting(filepath.Clean(abs))
			if rel, err := filepath.Rel(proj, real); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				t.Fatalf("CheckPath(%q) allowed, but it resolves to %s", p, real)
			}
		}
	})
}

// resolveExisting resolves symlinks of the longest existing prefix.
func resolveExisting(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p
	}
	return filepath.Join(resolveExisting(parent), filepath.Base(p))
}

func FuzzParseDocument(f *testing.F) {
	for _, s := range []string{"", "paths:\n  read: [\"/a/**\"]\n", "shell_commands:\n  allow: [ls]\n  deny: [\"rm -rf\"]\n",
		"org_roam_patterns:\n  tags: [x]\n", "paths: {read: [a], read: [b]}", "---\n---\n", "paths:\n  read: !!str x\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := policy.ParseDocument(data)
		if err != nil {
			return
		}
		out, err := doc.Marshal()
		if err != nil {
			t.Fatalf("Marshal of a parsed document: %v", err)
		}
		again, err := policy.ParseDocument(out)
		if err != nil {
			t.Fatalf("re-parse of %q: %v", out, err)
		}
		if !reflect.DeepEqual(normalize(doc), normalize(again)) {
			t.Fatalf("round trip changed the document:\n%#v\n%#v", doc, again)
		}
		_, _ = policy.Compile(doc, policy.Env{})
	})
}

// normalize treats nil and empty lists alike.
func normalize(d policy.Document) policy.Document {
	fix := func(s []string) []string {
		if len(s) == 0 {
			return nil
		}
		return s
	}
	d.Paths.Read, d.Paths.Write, d.Paths.Deny = fix(d.Paths.Read), fix(d.Paths.Write), fix(d.Paths.Deny)
	d.Shell.Allow, d.Shell.Deny = fix(d.Shell.Allow), fix(d.Shell.Deny)
	d.OrgRoam.Subdirectory, d.OrgRoam.Tags, d.OrgRoam.NodeIDs = fix(d.OrgRoam.Subdirectory), fix(d.OrgRoam.Tags), fix(d.OrgRoam.NodeIDs)
	return d
}
