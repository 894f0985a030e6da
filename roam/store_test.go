package roam

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var testNow = time.Date(2026, 11, 22, 10, 30, 5, 0, time.UTC)

// newStore returns a Store on a fresh directory with a fixed clock and IDs
// id-1, id-2, … .
func newStore(t *testing.T) *Store {
	t.Helper()
	var mu sync.Mutex
	n := 0
	return &Store{
		Dir: t.TempDir(),
		Now: func() time.Time { return testNow },
		NewID: func() string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return fmt.Sprintf("id-%d", n)
		},
	}
}

func readText(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeText(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// listFiles returns every path below dir, relative and slash-separated.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCreate(t *testing.T) {
	tests := []struct {
		name, title, sub string
		tags             []string
		wantFile         string
		wantContent      string
		wantTags         []string
	}{
		{
			name: "plain", title: "Hello, World!",
			wantFile:    "20261122103005-hello_world.org",
			wantContent: ":PROPERTIES:\n:ID:       id-1\n:END:\n#+title: Hello, World!\n",
			wantTags:    []string{},
		},
		{
			name: "tags and subdirectory", title: "  Go: os.Root  ", sub: "gptel/notes", tags: []string{"gptel", "go", "gptel"},
			wantFile:    "gptel/notes/20261122103005-go_os_root.org",
			wantContent: ":PROPERTIES:\n:ID:       id-1\n:END:\n#+title: Go: os.Root\n#+filetags: :gptel:go:\n",
			wantTags:    []string{"gptel", "go"},
		},
		{
			name: "unicode title", title: "Ärger über Café", sub: "./a//b/", tags: []string{"ünï", "x@y", "a#b%c-d_e"},
			wantFile:    "a/b/20261122103005-ärger_über_café.org",
			wantContent: ":PROPERTIES:\n:ID:       id-1\n:END:\n#+title: Ärger über Café\n#+filetags: :ünï:x@y:a#b%c-d_e:\n",
			wantTags:    []string{"ünï", "x@y", "a#b%c-d_e"},
		},
		{
			name: "punctuation only", title: "???",
			wantFile:    "20261122103005-untitled.org",
			wantContent: ":PROPERTIES:\n:ID:       id-1\n:END:\n#+title: ???\n",
			wantTags:    []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			n, err := s.Create(t.Context(), tt.title, tt.sub, tt.tags)
			if err != nil {
				t.Fatal(err)
			}
			if n.File != tt.wantFile {
				t.Errorf("File = %q, want %q", n.File, tt.wantFile)
			}
			if n.ID != "id-1" || n.Content != tt.wantContent || !slices.Equal(n.Tags, tt.wantTags) {
				t.Errorf("node = %+v", n)
			}
			name := filepath.Join(s.Dir, filepath.FromSlash(tt.wantFile))
			if got := readText(t, name); got != tt.wantContent {
				t.Errorf("file =\n%s\nwant\n%s", got, tt.wantContent)
			}
			info, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != 0o600 {
				t.Errorf("file mode = %v, want 0600", info.Mode().Perm())
			}
			if dir := filepath.Dir(name); dir != s.Dir {
				info, err := os.Stat(dir)
				if err != nil {
					t.Fatal(err)
				}
				if info.Mode().Perm() != 0o700 {
					t.Errorf("dir mode = %v, want 0700", info.Mode().Perm())
				}
			}
			got, err := s.Read(t.Context(), n.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Title != strings.TrimSpace(tt.title) || !slices.Equal(got.Tags, tt.wantTags) || got.File != n.File || got.Content != n.Content {
				t.Errorf("Read = %+v, want %+v", got, n)
			}
		})
	}
}

func TestCreateMakesDir(t *testing.T) {
	s := newStore(t)
	s.Dir = filepath.Join(s.Dir, "org-roam")
	if _, err := s.Create(t.Context(), "x", "", nil); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o700 {
		t.Errorf("mode = %v, want 0700", info.Mode().Perm())
	}
}

func TestCreateDefaults(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	a, err := s.Create(t.Context(), "same", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Create(t.Context(), "same", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []Node{a, b} {
		if len(n.ID) != 36 || n.ID != strings.ToLower(n.ID) || n.ID[14] != '4' || !strings.ContainsRune("89ab", rune(n.ID[19])) {
			t.Errorf("ID %q is not a lower-case UUID v4", n.ID)
		}
	}
	if a.ID == b.ID || a.File == b.File {
		t.Errorf("two creates gave %q %q and %q %q", a.ID, a.File, b.ID, b.File)
	}
}

func TestCreateNeverOverwrites(t *testing.T) {
	s := newStore(t)
	taken := filepath.Join(s.Dir, "20261122103005-note.org")
	writeText(t, taken, "mine\n")
	var files []string
	for range 3 {
		n, err := s.Create(t.Context(), "Note", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, n.File)
	}
	want := []string{"20261122103005-note-2.org", "20261122103005-note-3.org", "20261122103005-note-4.org"}
	if !slices.Equal(files, want) {
		t.Errorf("files = %q, want %q", files, want)
	}
	if got := readText(t, taken); got != "mine\n" {
		t.Errorf("existing file overwritten: %q", got)
	}
}

func TestCreateInvalid(t *testing.T) {
	tests := []struct {
		name, title, sub string
		tags             []string
		arg, value       string
	}{
		{name: "newline in title", title: "a\nb", arg: "title", value: "a\nb"},
		{name: "carriage return in title", title: "a\rb", arg: "title", value: "a\rb"},
		{name: "NUL in title", title: "a\x00b", arg: "title", value: "a\x00b"},
		{name: "tab in title", title: "a\tb", arg: "title", value: "a\tb"},
		{name: "line separator in title", title: "a\u2028b", arg: "title", value: "a\u2028b"},
		{name: "empty title", title: " ", arg: "title", value: " "},
		{name: "invalid UTF-8 title", title: "a\xffb", arg: "title", value: "a\xffb"},
		{name: "long title", title: strings.Repeat("x", 1025), arg: "title", value: strings.Repeat("x", 1025)},
		{name: "absolute subdirectory", title: "t", sub: "/etc", arg: "subdirectory", value: "/etc"},
		{name: "dotdot", title: "t", sub: "..", arg: "subdirectory", value: ".."},
		{name: "dotdot inside", title: "t", sub: "a/../../x", arg: "subdirectory", value: "a/../../x"},
		{name: "dotdot that stays inside", title: "t", sub: "a/../b", arg: "subdirectory", value: "a/../b"},
		{name: "hidden subdirectory", title: "t", sub: "a/.git", arg: "subdirectory", value: "a/.git"},
		{name: "backslash", title: "t", sub: `a\..\..`, arg: "subdirectory", value: `a\..\..`},
		{name: "newline in subdirectory", title: "t", sub: "a\nb", arg: "subdirectory", value: "a\nb"},
		{name: "tag with space", title: "t", tags: []string{"ok", "a b"}, arg: "tags", value: "a b"},
		{name: "tag with colon", title: "t", tags: []string{"a:b"}, arg: "tags", value: "a:b"},
		{name: "empty tag", title: "t", tags: []string{""}, arg: "tags", value: ""},
		{name: "tag with newline", title: "t", tags: []string{"a\n#+title: x"}, arg: "tags", value: "a\n#+title: x"},
		{name: "tag with bracket", title: "t", tags: []string{"[x]"}, arg: "tags", value: "[x]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			_, err := s.Create(t.Context(), tt.title, tt.sub, tt.tags)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			var ie *InvalidError
			if !errors.As(err, &ie) || ie.Arg != tt.arg || ie.Value != tt.value {
				t.Errorf("err = %#v, want arg %q value %q", err, tt.arg, tt.value)
			}
			if files := listFiles(t, s.Dir); len(files) != 0 {
				t.Errorf("files written: %q", files)
			}
		})
	}
}

func TestCreateSymlinks(t *testing.T) {
	tests := []struct {
		name    string
		link    string // name of the symlink below Dir
		target  func(dir, outside string) string
		sub     string
		wantErr bool
	}{
		{name: "escaping directory", link: "esc", target: func(_, out string) string { return out }, sub: "esc", wantErr: true},
		{name: "escaping directory deeper", link: "esc", target: func(_, out string) string { return out }, sub: "esc/deeper", wantErr: true},
		{name: "escaping relative", link: "a/up", target: func(string, string) string { return "../.." }, sub: "a/up/x", wantErr: true},
		{name: "relative inside directory", link: "alias", target: func(string, string) string { return "real" }, sub: "alias"},
		// os.Root refuses absolute symlinks even when they point inside.
		{name: "absolute inside directory", link: "alias", target: func(dir, _ string) string { return filepath.Join(dir, "real") }, sub: "alias", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			outside := t.TempDir()
			if err := os.MkdirAll(filepath.Join(s.Dir, "real"), 0o700); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(s.Dir, tt.link)
			if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tt.target(s.Dir, outside), link); err != nil {
				t.Fatal(err)
			}
			n, err := s.Create(t.Context(), "Escape", tt.sub, nil)
			if files := listFiles(t, outside); len(files) != 0 {
				t.Errorf("written outside the directory: %q", files)
			}
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Create in %q = %+v, want an error", tt.sub, n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(s.Dir, "real", filepath.Base(n.File))); err != nil {
				t.Errorf("node not in the symlinked directory: %v", err)
			}
		})
	}
}

func TestCreateCanceled(t *testing.T) {
	s := newStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Create(ctx, "x", "", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestStoreWithoutDir(t *testing.T) {
	var s Store
	if _, err := s.Create(t.Context(), "x", "", nil); err == nil {
		t.Error("Create without Dir succeeded")
	}
	if _, err := s.Read(t.Context(), "x"); err == nil {
		t.Error("Read without Dir succeeded")
	}
}

func TestCreateBadNewID(t *testing.T) {
	s := newStore(t)
	s.NewID = func() string { return "../x" }
	if _, err := s.Create(t.Context(), "x", "", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("err = %v, want ErrInvalid", err)
	}
}

func TestRead(t *testing.T) {
	const id = "5b9a2a6c-7d1e-4f0a-9c3b-2e8f1d4a6b7c"
	tests := []struct {
		name      string
		files     map[string]string
		want      Node
		wantErr   error
		symlinkTo string // when set, "link.org" points to this file outside Dir
		dirLinkTo bool   // when set, "linked" points to a directory outside Dir holding the node
	}{
		{
			name: "hand written with comments and CRLF",
			files: map[string]string{
				"other.org": ":PROPERTIES:\n:ID: other\n:END:\n#+title: Other\n",
				"sub/n.org": "# -*- mode: org -*-\r\n\r\n:properties:\r\n:CREATED: [2026-01-01]\r\n:id:   " + id + "  \r\n:END:\r\n#+TITLE:  The Node \r\n#+FILETAGS: :a:b:\r\n#+filetags: c a\r\n* Heading\r\n#+filetags: :ignored:\r\n",
			},
			want: Node{ID: id, Title: "The Node", Tags: []string{"a", "b", "c"}, File: "sub/n.org"},
		},
		{
			name:    "ID only under a heading",
			files:   map[string]string{"n.org": "#+title: T\n* H\n:PROPERTIES:\n:ID: " + id + "\n:END:\n"},
			wantErr: ErrNotFound,
		},
		{
			name:    "hidden directory",
			files:   map[string]string{".hidden/n.org": ":PROPERTIES:\n:ID: " + id + "\n:END:\n"},
			wantErr: ErrNotFound,
		},
		{
			name:    "not an org file",
			files:   map[string]string{"n.txt": ":PROPERTIES:\n:ID: " + id + "\n:END:\n", ".#n.org": ":PROPERTIES:\n:ID: " + id + "\n:END:\n"},
			wantErr: ErrNotFound,
		},
		{
			name:    "unclosed drawer",
			files:   map[string]string{"n.org": ":PROPERTIES:\n:ID: " + id + "\n#+title: x\n"},
			wantErr: ErrNotFound,
		},
		{
			name:      "symlinked file outside",
			symlinkTo: ":PROPERTIES:\n:ID: " + id + "\n:END:\n",
			wantErr:   ErrNotFound,
		},
		{
			name:      "symlinked directory outside",
			dirLinkTo: true,
			wantErr:   ErrNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			for name, content := range tt.files {
				writeText(t, filepath.Join(s.Dir, filepath.FromSlash(name)), content)
			}
			if tt.symlinkTo != "" {
				outside := filepath.Join(t.TempDir(), "n.org")
				writeText(t, outside, tt.symlinkTo)
				if err := os.Symlink(outside, filepath.Join(s.Dir, "link.org")); err != nil {
					t.Fatal(err)
				}
			}
			if tt.dirLinkTo {
				outside := t.TempDir()
				writeText(t, filepath.Join(outside, "n.org"), ":PROPERTIES:\n:ID: "+id+"\n:END:\n")
				if err := os.Symlink(outside, filepath.Join(s.Dir, "linked")); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.Read(t.Context(), id)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tt.want.ID || got.Title != tt.want.Title || !slices.Equal(got.Tags, tt.want.Tags) || got.File != tt.want.File {
				t.Errorf("Read = %+v, want %+v", got, tt.want)
			}
			if got.Content != tt.files[tt.want.File] || got.Truncated {
				t.Errorf("Content = %q (truncated %v)", got.Content, got.Truncated)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	s := newStore(t)
	tests := []struct {
		name string
		s    *Store
		id   string
		want error
	}{
		{name: "unknown id", s: s, id: "nope", want: ErrNotFound},
		{name: "missing directory", s: &Store{Dir: filepath.Join(s.Dir, "missing")}, id: "x", want: ErrNotFound},
		{name: "bad id", s: s, id: "../etc/passwd", want: ErrInvalid},
		{name: "empty id", s: s, id: "", want: ErrInvalid},
		{name: "long id", s: s, id: strings.Repeat("a", 65), want: ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.s.Read(t.Context(), tt.id); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestReadTruncates(t *testing.T) {
	s := newStore(t)
	n, err := s.Create(t.Context(), "Big", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(s.Dir, n.File)
	// "é" is two bytes; an odd prefix puts the cut in the middle of one.
	writeText(t, name, n.Content+"x"+strings.Repeat("é", MaxContent))
	got, err := s.Read(t.Context(), n.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Truncated || len(got.Content) > MaxContent || len(got.Content) < MaxContent-3 {
		t.Errorf("Truncated = %v, len(Content) = %d", got.Truncated, len(got.Content))
	}
	if !strings.HasPrefix(got.Content, n.Content) || !strings.HasSuffix(got.Content, "é") {
		t.Errorf("Content cut badly: ...%q", got.Content[len(got.Content)-8:])
	}
	if got.Title != "Big" {
		t.Errorf("Title = %q", got.Title)
	}
}

func TestAddTags(t *testing.T) {
	const head = ":PROPERTIES:\n:ID:       n1\n:END:\n"
	tests := []struct {
		name     string
		content  string
		tags     []string
		want     string
		wantTags []string
	}{
		{
			name: "merge into filetags", content: head + "#+title: T\n#+filetags: :a:b:\n\nBody\n", tags: []string{"b", "c", "a", "d", "c"},
			want: head + "#+title: T\n#+filetags: :a:b:c:d:\n\nBody\n", wantTags: []string{"a", "b", "c", "d"},
		},
		{
			name: "filetags after title", content: head + "#+title: T\nBody\n", tags: []string{"x"},
			want: head + "#+title: T\n#+filetags: :x:\nBody\n", wantTags: []string{"x"},
		},
		{
			name: "no title", content: head + "Body\n", tags: []string{"x"},
			want: head + "#+filetags: :x:\nBody\n", wantTags: []string{"x"},
		},
		{
			name: "title without newline", content: head + "#+title: T", tags: []string{"x"},
			want: head + "#+title: T\n#+filetags: :x:\n", wantTags: []string{"x"},
		},
		{
			name: "CRLF", content: strings.ReplaceAll(head, "\n", "\r\n") + "#+title: T\r\n", tags: []string{"x"},
			want: strings.ReplaceAll(head, "\n", "\r\n") + "#+title: T\r\n#+filetags: :x:\r\n", wantTags: []string{"x"},
		},
		{
			name: "second filetags line", content: head + "#+title: T\n#+filetags: a\n#+filetags: :b:\n", tags: []string{"b", "c"},
			want: head + "#+title: T\n#+filetags: a\n#+filetags: :b:c:\n", wantTags: []string{"a", "b", "c"},
		},
		{
			name: "nothing new", content: head + "#+title: T\n#+filetags:   :a:\n", tags: []string{"a"},
			want: head + "#+title: T\n#+filetags:   :a:\n", wantTags: []string{"a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			name := filepath.Join(s.Dir, "n.org")
			writeText(t, name, tt.content)
			if err := os.Chmod(name, 0o644); err != nil {
				t.Fatal(err)
			}
			n, err := s.AddTags(t.Context(), "n1", tt.tags)
			if err != nil {
				t.Fatal(err)
			}
			if got := readText(t, name); got != tt.want {
				t.Errorf("file =\n%q\nwant\n%q", got, tt.want)
			}
			if !slices.Equal(n.Tags, tt.wantTags) || n.Content != tt.want || n.File != "n.org" {
				t.Errorf("node = %+v", n)
			}
			info, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != 0o644 {
				t.Errorf("mode = %v, want the file's 0644 kept", info.Mode().Perm())
			}
			if files := listFiles(t, s.Dir); !slices.Equal(files, []string{"n.org"}) {
				t.Errorf("files = %q, want only n.org", files)
			}
		})
	}
}

func TestAddTagsErrors(t *testing.T) {
	s := newStore(t)
	n, err := s.Create(t.Context(), "T", "", []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		id    string
		tags  []string
		want  error
		value string
	}{
		{name: "unknown id", id: "nope", tags: []string{"x"}, want: ErrNotFound},
		{name: "bad id", id: "a/b", tags: []string{"x"}, want: ErrInvalid, value: "a/b"},
		{name: "bad tag", id: n.ID, tags: []string{"ok", "not:ok"}, want: ErrInvalid, value: "not:ok"},
		{name: "no tags", id: n.ID, want: ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.AddTags(t.Context(), tt.id, tt.tags)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var ie *InvalidError
			if errors.As(err, &ie) && ie.Value != tt.value {
				t.Errorf("Value = %q, want %q", ie.Value, tt.value)
			}
		})
	}
	if got := readText(t, filepath.Join(s.Dir, n.File)); got != n.Content {
		t.Errorf("file changed by failed calls: %q", got)
	}
}

func TestAddTagsConcurrent(t *testing.T) {
	s := newStore(t)
	n, err := s.Create(t.Context(), "Busy", "sub", []string{"start"})
	if err != nil {
		t.Fatal(err)
	}
	const workers = 16
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := range workers {
		wg.Go(func() {
			if _, err := s.AddTags(context.Background(), n.ID, []string{fmt.Sprintf("t%d", i)}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := s.Read(t.Context(), n.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"start"}
	for i := range workers {
		want = append(want, fmt.Sprintf("t%d", i))
	}
	slices.Sort(want)
	have := slices.Clone(got.Tags)
	slices.Sort(have)
	if !slices.Equal(have, want) {
		t.Errorf("tags = %q, want all of %q", got.Tags, want)
	}
	if files := listFiles(t, s.Dir); !slices.Equal(files, []string{"sub", n.File}) {
		t.Errorf("files = %q, want no leftovers", files)
	}
}

func TestLink(t *testing.T) {
	s := newStore(t)
	src, err := s.Create(t.Context(), "Source", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := s.Create(t.Context(), "Target [draft]", "deep/er", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	want := src.Content + "[[id:" + dst.ID + "][Target (draft)]]\n"
	for i := range 2 {
		n, err := s.Link(t.Context(), src.ID, dst.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n.ID != src.ID || n.Content != want {
			t.Errorf("Link #%d = %+v, want content %q", i+1, n, want)
		}
		if got := readText(t, filepath.Join(s.Dir, src.File)); got != want {
			t.Errorf("after link #%d file =\n%s\nwant\n%s", i+1, got, want)
		}
	}
	// Text after the link and a file without a final newline.
	name := filepath.Join(s.Dir, dst.File)
	writeText(t, name, strings.TrimSuffix(dst.Content, "\n"))
	n, err := s.Link(t.Context(), dst.ID, src.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := dst.Content + "[[id:" + src.ID + "][Source]]\n"; n.Content != want || readText(t, name) != want {
		t.Errorf("back link content = %q, want %q", n.Content, want)
	}
}

func TestLinkErrors(t *testing.T) {
	s := newStore(t)
	n, err := s.Create(t.Context(), "T", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name             string
		source, target   string
		want             error
		wantArg, wantVal string
	}{
		{name: "unknown target", source: n.ID, target: "nope", want: ErrNotFound},
		{name: "unknown source", source: "nope", target: n.ID, want: ErrNotFound},
		{name: "bad source", source: "x y", target: n.ID, want: ErrInvalid, wantArg: "source_id", wantVal: "x y"},
		{name: "bad target", source: n.ID, target: "]]", want: ErrInvalid, wantArg: "target_id", wantVal: "]]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Link(t.Context(), tt.source, tt.target)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var ie *InvalidError
			if errors.As(err, &ie) && (ie.Arg != tt.wantArg || ie.Value != tt.wantVal) {
				t.Errorf("err = %#v", ie)
			}
		})
	}
	if got := readText(t, filepath.Join(s.Dir, n.File)); got != n.Content {
		t.Errorf("file changed by failed calls: %q", got)
	}
}
