package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

func shellCall(command, cwd string) policy.Call {
	args, _ := json.Marshal(policy.ShellArgs{Command: command})
	return policy.Call{Tool: policy.ToolShell, Args: args, Cwd: cwd}
}

// TestUnworkable: a write grant for a path that does not exist can be made
// to work only for a file in an existing directory.
func TestUnworkable(t *testing.T) {
	root := t.TempDir()
	proj, out := filepath.Join(root, "proj"), filepath.Join(root, "out")
	for _, d := range []string{proj, out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) []policy.Widening { return []policy.Widening{{Flag: "--write", Value: p}} }
	for _, tc := range []struct {
		command string
		ws      []policy.Widening
		why     string
	}{
		{"touch ../out/new.txt", write(filepath.Join(out, "new.txt")), ""},
		{"touch ../out", write(out), ""},
		{"cat ../out/x", []policy.Widening{{Flag: "--read", Value: filepath.Join(out, "x")}}, ""},
		{"touch ../none/t.txt", write(filepath.Join(root, "none", "t.txt")), "nor does its directory"},
		{"mkdir ../out/d", write(filepath.Join(out, "d")), "makes the directory"},
		{"mkdir -p /x ../out/d", write(filepath.Join(out, "d")), "makes the directory"},
		{"install -d ../out/d", write(filepath.Join(out, "d")), "makes the directory"},
		{"mkdir ../out/other && touch ../out/d", write(filepath.Join(out, "d")), ""},
	} {
		t.Run(tc.command, func(t *testing.T) {
			got := unworkable(tc.ws, shellCall(tc.command, proj))
			if tc.why == "" && got != "" || tc.why != "" && !strings.Contains(got, tc.why) {
				t.Errorf("unworkable = %q, want %q", got, tc.why)
			}
		})
	}
}

// TestMakeGrantedFiles: the files a grant names are made empty before the
// run, and removed after it only when the run left them as they were made.
func TestMakeGrantedFiles(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists")
	if err := os.WriteFile(exists, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	untouched, written := filepath.Join(dir, "untouched"), filepath.Join(dir, "written")
	made, err := makeGrantedFiles([]policy.Widening{{Flag: "--write", Value: exists}, {Flag: "--write", Value: untouched},
		{Flag: "--write", Value: written}, {Flag: "--read", Value: filepath.Join(dir, "read")}, {Flag: "--write", Value: dir + "/**"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(made) != 2 {
		t.Fatalf("made %+v, want the two missing files", made)
	}
	if err := os.WriteFile(written, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	removeUntouched(made)
	if _, err := os.Stat(untouched); !os.IsNotExist(err) {
		t.Errorf("the untouched file stays: %v", err)
	}
	for _, p := range []string{exists, written} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if _, err := makeGrantedFiles([]policy.Widening{{Flag: "--write", Value: filepath.Join(dir, "none", "x")}}); err == nil {
		t.Error("a file in a missing directory was made")
	}
}
