package sessions

import (
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

func FuzzValidateID(f *testing.F) {
	for _, s := range []string{"ok-1", "../evil", "a/b", "..", "", ".x", "a..b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if ValidateID(id) != nil {
			return
		}
		if strings.ContainsAny(id, "/\\\x00") || strings.Contains(id, "..") || id == "" || len(id) > 128 || id[0] == '.' || id[0] == '-' {
			t.Errorf("accepted %q", id)
		}
	})
}

func FuzzExpandYAML(f *testing.F) {
	f.Add(commented, "/a/**", "ls")
	f.Add("{}\n", "/x", "git log")
	f.Add("# c\n", "~/n/**", "rg")
	f.Fuzz(func(t *testing.T, in, read, cmd string) {
		if _, err := policy.ParseDocument([]byte(in)); err != nil {
			return
		}
		if checkValue(read) != nil || checkValue(cmd) != nil {
			return
		}
		out, _, err := expandYAML([]byte(in), Expansion{Read: []string{read}, AllowCommands: []string{cmd}})
		if err != nil {
			return
		}
		doc, err := policy.ParseDocument(out)
		if err != nil {
			return // refused by ExpandScope before writing
		}
		if !contains(doc.Paths.Read, read) || !contains(doc.Shell.Allow, cmd) {
			t.Fatalf("expansion lost:\n%s", out)
		}
		again, added, err := expandYAML(out, Expansion{Read: []string{read}, AllowCommands: []string{cmd}})
		if err != nil || len(added) != 0 || string(again) != string(out) {
			t.Fatalf("not idempotent: %v %v", added, err)
		}
	})
}

func FuzzFrontMatter(f *testing.F) {
	f.Add("---\npaths:\n  read: [\"/a/**\"]\n---\nbody\n")
	f.Add("no front matter")
	f.Add("---\n---\n")
	f.Fuzz(func(t *testing.T, in string) {
		fm, ok := frontMatter([]byte(in))
		if ok && !strings.Contains(in, string(fm)) {
			t.Fatalf("front matter %q not in input", fm)
		}
		_, _, _ = scopeSections(fm)
	})
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
