package sessions

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scopegate/scopegate/policy"
)

func fixedClock() time.Time { return time.Date(2026, 11, 22, 10, 30, 5, 0, time.UTC) }

func newStore(t *testing.T) (*Store, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var warnings []string
	return &Store{Root: filepath.Join(t.TempDir(), "sessions"), Now: fixedClock, Warn: func(s string) {
		mu.Lock()
		defer mu.Unlock()
		warnings = append(warnings, s)
	}}, &warnings
}

func TestValidateID(t *testing.T) {
	tests := []struct {
		name, id string
		ok       bool
	}{
		{"plain", "api-integration-20261122103005", true},
		{"dots and underscores", "a.b_c", true},
		{"empty", "", false},
		{"parent", "..", false},
		{"traversal", "../evil", false},
		{"slash", "a/b", false},
		{"double dot inside", "a..b", false},
		{"leading dash", "-x", false},
		{"leading dot", ".hidden", false},
		{"space", "a b", false},
		{"max length", strings.Repeat("a", 128), true},
		{"over long", strings.Repeat("a", 129), false},
		{"non ascii", "séance", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateID(tt.id)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidateID(%q) = %v, want ok=%v", tt.id, err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidName) {
				t.Errorf("error %v does not wrap ErrInvalidName", err)
			}
		})
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"words", "API Integration", "api-integration"},
		{"punctuation", "  fix: the/bug!! ", "fix-the-bug"},
		{"nothing usable", "!!!", "session"},
		{"unicode dropped", "café crème", "caf-cr-me"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Slug(tt.in); got != tt.want {
				t.Errorf("Slug(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if ValidateID(Slug(tt.in)+"-20261122103005") != nil {
				t.Errorf("slug of %q does not make a valid id", tt.in)
			}
		})
	}
}

func TestCreateLayout(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	doc := policy.Document{Paths: policy.PathRules{Read: []string{"/p/**"}}}
	c, err := s.Create(ctx, CreateOptions{Name: "API Integration", Scope: doc, ProjectRoot: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	if c.SessionID != "api-integration-20261122103005" || c.Branch != MainBranch {
		t.Fatalf("created %+v", c)
	}
	for _, f := range []string{SessionFile, ScopeFile, MetadataFile, BranchMetadataFile} {
		fi, err := os.Stat(filepath.Join(c.BranchDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", f, fi.Mode().Perm())
		}
	}
	for _, d := range []string{c.SessionDir, filepath.Join(c.SessionDir, "branches"), c.BranchDir} {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", d, fi.Mode(), err)
		}
	}
	if target, err := os.Readlink(filepath.Join(c.SessionDir, "current")); err != nil || target != "branches/main" {
		t.Errorf("current -> %q, %v", target, err)
	}
	md, err := ReadMetadata(c.BranchDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if md.SessionID != c.SessionID || md.Preset != DefaultPreset || !md.Created.Equal(fixedClock()) || md.ProjectRoot != "/p" {
		t.Errorf("metadata %+v", md)
	}
	raw, _ := os.ReadFile(filepath.Join(c.BranchDir, MetadataFile))
	if !strings.Contains(string(raw), "created: 2026-11-22T10:30:05Z") {
		t.Errorf("metadata.yml not RFC 3339 UTC:\n%s", raw)
	}
	// A second session with the same name in the same second gets -2.
	c2, err := s.Create(ctx, CreateOptions{Name: "API Integration"})
	if err != nil || c2.SessionID != c.SessionID+"-2" {
		t.Fatalf("second create = %+v, %v", c2, err)
	}
	md2, _ := ReadMetadata(c2.BranchDir, nil)
	if md2.SessionID != c2.SessionID {
		t.Errorf("metadata session_id %q in %s", md2.SessionID, c2.SessionDir)
	}
}

func TestCreateExplicitID(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	tests := []struct {
		name    string
		opts    CreateOptions
		wantErr error
		existed bool
	}{
		{name: "first", opts: CreateOptions{ID: "ext-1"}},
		{name: "again without exist-ok", opts: CreateOptions{ID: "ext-1"}, wantErr: ErrExists},
		{name: "again with exist-ok", opts: CreateOptions{ID: "ext-1", ExistOK: true}, existed: true},
		{name: "bad id", opts: CreateOptions{ID: "../evil"}, wantErr: ErrInvalidName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := s.Create(ctx, tt.opts)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.SessionDir != filepath.Join(s.Root, "ext-1") || c.Existed != tt.existed {
				t.Errorf("created %+v", c)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.Root), "evil")); err == nil {
		t.Error("../evil was created")
	}
}

func TestConcurrentCreate(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	const n = 16
	ids := make([]string, n)
	same := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c, err := s.Create(ctx, CreateOptions{Name: "race"})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = c.SessionID
			c, err = s.Create(ctx, CreateOptions{ID: "shared", ExistOK: true})
			if err != nil {
				t.Error(err)
				return
			}
			same[i] = c.BranchDir
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := range n {
		if seen[ids[i]] {
			t.Errorf("id %q handed out twice", ids[i])
		}
		seen[ids[i]] = true
		if same[i] != same[0] {
			t.Errorf("get-or-create gave %q and %q", same[i], same[0])
		}
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != n+1 {
		t.Fatalf("list has %d sessions (%v), want %d", len(list), err, n+1)
	}
	for _, sum := range list {
		if sum.Error != "" {
			t.Errorf("%s: %s", sum.SessionID, sum.Error)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	s, _ := newStore(t)
	if _, err := s.Create(context.Background(), CreateOptions{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, id, branch string
		want             error
		msg              string
	}{
		{"unknown session", "nope", "", ErrNotFound, `session "nope" not found`},
		{"unknown branch", "s1", "dev", ErrNotFound, `branch "dev" of session "s1" not found`},
		{"bad id", "a/b", "", ErrInvalidName, ""},
		{"bad branch", "s1", "..", ErrInvalidName, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Resolve(tt.id, tt.branch)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.msg != "" && err.Error() != tt.msg {
				t.Errorf("message %q, want %q", err.Error(), tt.msg)
			}
		})
	}
}

func TestBranches(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	c, err := s.Create(ctx, CreateOptions{ID: "s1", Scope: policy.Document{Paths: policy.PathRules{Read: []string{"/a/**"}}}})
	if err != nil {
		t.Fatal(err)
	}
	at := int64(42)
	b, err := s.CreateBranch(ctx, "s1", "alt", BranchOptions{At: &at, Switch: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{ScopeFile, MetadataFile} {
		want, _ := os.ReadFile(filepath.Join(c.BranchDir, f))
		got, _ := os.ReadFile(filepath.Join(b.BranchDir, f))
		if string(got) != string(want) {
			t.Errorf("%s not copied", f)
		}
	}
	bm, err := ReadBranchMetadata(b.BranchDir)
	if err != nil || bm.ParentBranch != "main" || bm.BranchPointPosition == nil || *bm.BranchPointPosition != 42 {
		t.Errorf("branch metadata %+v %v", bm, err)
	}
	if cur, _ := s.Current("s1"); cur != "alt" {
		t.Errorf("current = %q after --switch", cur)
	}
	if _, err := s.CreateBranch(ctx, "s1", "alt", BranchOptions{}); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate branch: %v", err)
	}
	if err := s.Switch("s1", "main"); err != nil {
		t.Fatal(err)
	}
	info, err := s.Show("s1")
	if err != nil || info.CurrentBranch != "main" || len(info.Branches) != 2 {
		t.Fatalf("show = %+v, %v", info, err)
	}
	if err := s.Switch("s1", "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("switch to ghost: %v", err)
	}
}

func TestLegacy(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		wantScope string // substring of scope.yml, "" = no scope.yml
		preset    string
		warnings  int
		mdErr     error
	}{
		{
			name: "scope-plan.yml and agent_type",
			files: map[string]string{"scope-plan.yml": "session_id: old\ncreated: 2024-01-01T00:00:00Z\nagent_type: researcher\n",
				"scope.yml": "paths:\n  read: [\"/x/**\"]\n"},
			wantScope: "/x/**", preset: "researcher", warnings: 2,
		},
		{
			name: "preset.md migrates",
			files: map[string]string{"metadata.yml": "session_id: old\npreset: executor\n",
				"preset.md": "---\nbackend: Claude\nmodel: opus\npaths:\n  read: [\"/legacy/**\"]\nshell_commands:\n  allow: [ls]\n---\nYou are helpful.\n"},
			wantScope: "/legacy/**", preset: "executor", warnings: 1,
		},
		{
			name:      "corrupt metadata preserved",
			files:     map[string]string{"metadata.yml": "session_id: [unclosed\n", "scope.yml": "{}\n"},
			wantScope: "{}", warnings: 1, mdErr: ErrCorrupt,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "old", "branches", "main")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			for name, data := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var warnings []string
			b, err := OpenBranch(dir, func(s string) { warnings = append(warnings, s) })
			if err != nil {
				t.Fatal(err)
			}
			if len(warnings) != tt.warnings {
				t.Errorf("warnings %q, want %d", warnings, tt.warnings)
			}
			if b.SessionID != "old" || b.Name != "main" {
				t.Errorf("branch %+v", b)
			}
			if b.Metadata.Preset != tt.preset || !errors.Is(b.MetadataErr, tt.mdErr) {
				t.Errorf("preset %q err %v", b.Metadata.Preset, b.MetadataErr)
			}
			scope, _ := os.ReadFile(b.ScopeFile())
			if !strings.Contains(string(scope), tt.wantScope) {
				t.Errorf("scope.yml = %q, want it to contain %q", scope, tt.wantScope)
			}
			if _, err := policy.ParseDocument(scope); err != nil {
				t.Errorf("migrated scope invalid: %v", err)
			}
			for name, data := range tt.files {
				got, _ := os.ReadFile(filepath.Join(dir, name))
				if string(got) != data {
					t.Errorf("%s was modified", name)
				}
			}
			// A second open migrates nothing more.
			warnings = nil
			if _, err := OpenBranch(dir, func(s string) { warnings = append(warnings, s) }); err != nil {
				t.Fatal(err)
			}
			for _, w := range warnings {
				if strings.Contains(w, "migrated") {
					t.Errorf("migrated twice: %s", w)
				}
			}
		})
	}
}
