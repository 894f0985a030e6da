package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/scopegate/scopegate/audit"
)

func TestPromptLogCommand(t *testing.T) {
	dir := t.TempDir()
	promptFile := filepath.Join(t.TempDir(), "prompt.md")
	if err := os.WriteFile(promptFile, []byte("Be careful.\n* not a heading\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		args    []string
		code    int
		entries int
	}{
		{"first prompt from text", []string{"--new", "You are helpful."}, 0, 1},
		{"same prompt again is not logged", []string{"--new", "You are helpful."}, 0, 1},
		{"new prompt from file", []string{"--new-file", promptFile}, 0, 2},
		{"explicit previous", []string{"--new", "x", "--previous", "y"}, 0, 3},
		{"neither new nor new-file", nil, 2, 3},
		{"both new and new-file", []string{"--new", "a", "--new-file", promptFile}, 2, 3},
		{"missing file", []string{"--new-file", filepath.Join(dir, "nope")}, 2, 3},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			code, _, errOut := runMain(append([]string{"prompt", "log", "--branch-dir", dir}, st.args...)...)
			if code != st.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, st.code, errOut)
			}
			got, err := audit.ReadPrompts(filepath.Join(dir, "system-prompts.org"), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != st.entries {
				t.Fatalf("%d entries, want %d", len(got), st.entries)
			}
		})
	}
	got, err := audit.ReadPrompts(filepath.Join(dir, "system-prompts.org"), nil)
	if err != nil || len(got) != 3 {
		t.Fatalf("ReadPrompts: %v, %d", err, len(got))
	}
	if got[1].Previous != "You are helpful.\n" || got[1].New != "Be careful.\n* not a heading\n" || got[1].Source != promptFile {
		t.Errorf("second change = %+v", got[1])
	}
	if got[2].Previous != "y\n" || got[2].New != "x\n" {
		t.Errorf("third change = %+v", got[2])
	}
}
