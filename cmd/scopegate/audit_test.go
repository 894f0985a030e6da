package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scopegate/scopegate/audit"
)

func runMain(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestAuditCommand(t *testing.T) {
	dir := t.TempDir()
	log := &audit.Log{Path: filepath.Join(dir, "tools.org"), NoSync: true}
	base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for i, d := range []string{audit.DecisionAllowed, audit.DecisionDenied, audit.DecisionInterrupted} {
		e := audit.Entry{CallID: "ID" + d, Time: base.Add(time.Duration(i) * time.Hour), Tool: "shell", Decision: d,
			Reason: "allowed", Args: json.RawMessage(`{"command":"echo ` + d + `"}`)}
		if err := log.Append(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		has      []string
		hasNot   []string
		jsonLen  int
		isJSON   bool
		inStderr string
	}{
		{name: "table", args: nil, code: 0, has: []string{"CALL_ID", "IDallowed", "IDdenied", "IDinterrupted", "echo denied"}},
		{name: "decision filter", args: []string{"--decision", "denied"}, code: 0, has: []string{"IDdenied"}, hasNot: []string{"IDallowed"}},
		{name: "since filter json", args: []string{"--since", "2026-11-22T11:00:00Z", "--json"}, isJSON: true, jsonLen: 2},
		{name: "bad decision", args: []string{"--decision", "maybe"}, code: 2, inStderr: "--decision"},
		{name: "bad since", args: []string{"--since", "yesterday"}, code: 2, inStderr: "--since"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(append([]string{"audit", "--branch-dir", dir}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tt.code, errOut)
			}
			for _, s := range tt.has {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(out, s) {
					t.Errorf("output has %q:\n%s", s, out)
				}
			}
			if tt.inStderr != "" && !strings.Contains(errOut, tt.inStderr) {
				t.Errorf("stderr %q lacks %q", errOut, tt.inStderr)
			}
			if tt.isJSON {
				var es []audit.Entry
				if err := json.Unmarshal([]byte(out), &es); err != nil {
					t.Fatalf("not JSON: %v\n%s", err, out)
				}
				if len(es) != tt.jsonLen {
					t.Errorf("%d entries, want %d", len(es), tt.jsonLen)
				}
			}
		})
	}
	t.Run("no selector", func(t *testing.T) {
		if code, _, _ := runMain("audit"); code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
	})
	t.Run("no tools.org yet", func(t *testing.T) {
		code, out, _ := runMain("audit", "--branch-dir", t.TempDir(), "--json")
		if code != 0 || strings.TrimSpace(out) != "[]" {
			t.Errorf("exit %d, output %q; want 0, []", code, out)
		}
	})
}
