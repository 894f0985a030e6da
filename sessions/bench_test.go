package sessions_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/scopegate/scopegate/sessions"
	"github.com/scopegate/scopegate/sessions/sessionstest"
)

const benchSessions = 10000

func fixture(b *testing.B) *sessions.Store {
	b.Helper()
	root := filepath.Join(b.TempDir(), "sessions")
	if err := sessionstest.MakeFixture(root, benchSessions); err != nil {
		b.Fatal(err)
	}
	return &sessions.Store{Root: root}
}

func BenchmarkList10k(b *testing.B) {
	s := fixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		list, err := s.List(ctx)
		if err != nil || len(list) != benchSessions {
			b.Fatalf("list: %d, %v", len(list), err)
		}
	}
}

func BenchmarkResolve10k(b *testing.B) {
	s := fixture(b)
	id := sessionstest.SessionID(benchSessions / 2)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Resolve(id, ""); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExpandNoop(b *testing.B) {
	s := fixture(b)
	dir, err := s.Resolve(sessionstest.SessionID(1), "main")
	if err != nil {
		b.Fatal(err)
	}
	add := sessions.Expansion{Read: []string{"/srv/**"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sessions.ExpandScope(context.Background(), dir, add); err != nil {
			b.Fatal(err)
		}
	}
}
