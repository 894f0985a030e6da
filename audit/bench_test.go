package audit

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func benchEntry() Entry {
	return Entry{
		CallID: "01JD0000000000000000000000", Time: testTime, Tool: "shell", Decision: DecisionAllowed,
		Reason: "allowed", Cwd: "/home/u/proj", Args: json.RawMessage(`{"command":"go test ./..."}`),
		Stdout: strings.Repeat("ok  \tgithub.com/x/y\t0.123s\n", 40), ExitCode: ptr(0), DurationMS: ptr(int64(1234)),
		Confinement: "landlock",
	}
}

func BenchmarkRender(b *testing.B) {
	e := benchEntry()
	b.ReportAllocs()
	for b.Loop() {
		render(&e, 0)
	}
}

// checkEntry is the entry of a check, what serve writes most.
func checkEntry() Entry {
	return Entry{
		CallID: "01JD0000000000000000000000", Time: testTime, Tool: "read_file", Mode: ModeCheck, Decision: DecisionAllowed,
		Reason: "allowed", Cwd: "/home/u/proj", Args: json.RawMessage(`{"path":"hello.txt"}`),
	}
}

func BenchmarkRenderCheck(b *testing.B) {
	e := checkEntry()
	b.ReportAllocs()
	for b.Loop() {
		render(&e, 0)
	}
}

// BenchmarkAppend measures one append at a time: as the per-call build
// appends (a Log of its own, the head opened for the append), and as serve
// does (a Group that keeps the branch's chain head open), unsynced as
// checks are, and synced as calls are.
func BenchmarkAppend(b *testing.B) {
	for _, bc := range []struct {
		name   string
		noSync bool
		group  *Group
	}{{"nosync", true, nil}, {"fsync", false, nil}, {"nosync_serve", true, &Group{KeepOpen: 256}}} {
		b.Run(bc.name, func(b *testing.B) {
			log := &Log{Path: filepath.Join(b.TempDir(), "tools.org"), NoSync: bc.noSync, Group: bc.group}
			e := benchEntry()
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if err := log.Append(ctx, e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReadFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "tools.org")
	log := &Log{Path: path, NoSync: true}
	for range 1000 {
		if err := log.Append(b.Context(), benchEntry()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if es, err := ReadFile(path, Filter{}); err != nil || len(es) != 1000 {
			b.Fatal(len(es), err)
		}
	}
}
