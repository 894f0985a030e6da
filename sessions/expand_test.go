package sessions

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

const commented = `# Scope for the API work.
paths:
  # what the agent may read
  read: ["/home/u/proj/**"] # the project
  deny:
    - "**/.git/**"
shell_commands:
  allow: [ls, git]
`

func TestExpandScope(t *testing.T) {
	tests := []struct {
		name    string
		initial *string
		add     Expansion
		keep    []string
		read    []string
		allow   []string
		tags    []string
		added   int
		wantErr error
	}{
		{name: "keeps comments and order", initial: ptr(commented), add: Expansion{Read: []string{"/tmp/x/**"}, AllowCommands: []string{"rg"}},
			keep: []string{"# Scope for the API work.", "# what the agent may read", "# the project"},
			read: []string{"/home/u/proj/**", "/tmp/x/**"}, allow: []string{"ls", "git", "rg"}, added: 2},
		{name: "idempotent", initial: ptr(commented), add: Expansion{Read: []string{"/home/u/proj/**"}, AllowCommands: []string{"git"}},
			read: []string{"/home/u/proj/**"}, allow: []string{"ls", "git"}},
		{name: "new sections", initial: ptr("# only a comment\n"), add: Expansion{RoamTags: []string{"gptel"}, Read: []string{"/a/**"}},
			keep: []string{"# only a comment"}, read: []string{"/a/**"}, tags: []string{"gptel"}, added: 2},
		{name: "empty flow mapping", initial: ptr("{}\n"), add: Expansion{Read: []string{"/a/**"}}, read: []string{"/a/**"}, added: 1},
		{name: "null list", initial: ptr("paths:\n  read:\n"), add: Expansion{Read: []string{"/a/**"}}, read: []string{"/a/**"}, added: 1},
		{name: "missing file", add: Expansion{Read: []string{"/a/**"}}, read: []string{"/a/**"}, added: 1},
		{name: "invalid glob refused", initial: ptr(commented), add: Expansion{Read: []string{"/a/[**"}}, wantErr: ErrInvalidExpansion},
		{name: "unresolved variable refused", initial: ptr(commented), add: Expansion{Write: []string{"${project_root}/**"}}, wantErr: ErrInvalidExpansion},
		{name: "newline refused", initial: ptr(commented), add: Expansion{AllowCommands: []string{"ls\nrm"}}, wantErr: ErrInvalidExpansion},
		{name: "invalid file refused", initial: ptr("paths:\n  reed: []\n"), add: Expansion{Read: []string{"/a/**"}}, wantErr: ErrInvalidExpansion},
		{name: "section of wrong kind", initial: ptr("paths: []\n"), add: Expansion{Read: []string{"/a/**"}}, wantErr: ErrInvalidExpansion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ScopeFile)
			if tt.initial != nil {
				if err := os.WriteFile(path, []byte(*tt.initial), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			res, err := ExpandScope(context.Background(), dir, tt.add)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				got, _ := os.ReadFile(path)
				if tt.initial != nil && string(got) != *tt.initial {
					t.Errorf("file changed on refusal:\n%s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != string(res.Data) {
				t.Errorf("returned data differs from the file")
			}
			for _, k := range tt.keep {
				if !strings.Contains(string(got), k) {
					t.Errorf("lost %q:\n%s", k, got)
				}
			}
			if !slices.Equal(res.Scope.Paths.Read, tt.read) || !slices.Equal(res.Scope.Shell.Allow, tt.allow) || !slices.Equal(res.Scope.OrgRoam.Tags, tt.tags) {
				t.Errorf("scope = %+v", res.Scope)
			}
			n := 0
			for _, c := range res.Added {
				n += len(c)
			}
			if n != tt.added {
				t.Errorf("added %v, want %d", res.Added, tt.added)
			}
			if tt.added == 0 && tt.initial != nil && string(got) != *tt.initial {
				t.Errorf("a no-op expansion rewrote the file:\n%s", got)
			}
			if strings.Index(string(got), "paths:") > strings.Index(string(got), "shell_commands:") && strings.Contains(string(got), "shell_commands:") {
				t.Errorf("sections reordered:\n%s", got)
			}
		})
	}
}

func TestExpandConcurrent(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ScopeFile), []byte(commented), 0o600); err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			p := "/extra/" + string(rune('a'+i)) + "/**"
			if _, err := ExpandScope(context.Background(), dir, Expansion{Read: []string{p}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	res, err := ExpandScope(context.Background(), dir, Expansion{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scope.Paths.Read) != n+1 {
		t.Errorf("read has %d entries, want %d: %q", len(res.Scope.Paths.Read), n+1, res.Scope.Paths.Read)
	}
}

func ptr(s string) *string { return &s }

func TestExpandNetwork(t *testing.T) {
	tests := []struct {
		name    string
		initial string
		add     Expansion
		mode    string
		hosts   []string
		keep    []string
		added   int
		wantErr bool
	}{
		{name: "missing key", initial: commented, add: Expansion{AllowHosts: []string{"github.com"}},
			mode: "list", hosts: []string{"github.com"}, keep: []string{"# the project"}, added: 1},
		{name: "none", initial: "# net\nnetwork: none # nothing yet\n", add: Expansion{AllowHosts: []string{"github.com", "localhost:8080"}},
			mode: "list", hosts: []string{"github.com", "localhost:8080"}, keep: []string{"# net", "# nothing yet"}, added: 2},
		{name: "list grows", initial: "network:\n  # forges\n  - github.com\n", add: Expansion{AllowHosts: []string{"github.com", ".githubusercontent.com", "[::1]:8080"}},
			mode: "list", hosts: []string{"github.com", ".githubusercontent.com", "[::1]:8080"}, keep: []string{"# forges"}, added: 2},
		{name: "flow list", initial: "network: [github.com]\n", add: Expansion{AllowHosts: []string{"pypi.org:443"}},
			mode: "list", hosts: []string{"github.com", "pypi.org:443"}, added: 1},
		{name: "idempotent", initial: "network:\n  - github.com\n", add: Expansion{AllowHosts: []string{"github.com"}},
			mode: "list", hosts: []string{"github.com"}},
		{name: "any stays any", initial: "network: any\n", add: Expansion{AllowHosts: []string{"github.com"}}, mode: "any"},
		{name: "to any", initial: "network:\n  - github.com\n", add: Expansion{Network: "any"}, mode: "any", added: 1},
		{name: "none to any", initial: commented, add: Expansion{Network: "any"}, mode: "any", keep: []string{"# the project"}, added: 1},
		{name: "star refused", initial: commented, add: Expansion{AllowHosts: []string{"*.github.com"}}, wantErr: true},
		{name: "url refused", initial: commented, add: Expansion{AllowHosts: []string{"https://github.com"}}, wantErr: true},
		{name: "none refused", initial: commented, add: Expansion{Network: "none"}, wantErr: true},
		{name: "network of wrong kind", initial: "network: {a: b}\n", add: Expansion{AllowHosts: []string{"github.com"}}, wantErr: true},
		{name: "socket on none", initial: "# net\nnetwork: none # nothing yet\n", add: Expansion{AllowSockets: []string{"/run/docker.sock"}},
			mode: "list", hosts: []string{"unix:/run/docker.sock"}, keep: []string{"# net", "# nothing yet"}, added: 1},
		{name: "socket on a list", initial: "network:\n  # forges\n  - github.com\n", add: Expansion{AllowSockets: []string{"/run/a.sock"}, AllowHosts: []string{"pypi.org:443"}},
			mode: "list", hosts: []string{"github.com", "pypi.org:443", "unix:/run/a.sock"}, keep: []string{"# forges"}, added: 2},
		{name: "socket idempotent", initial: "network: [github.com, unix:/run/a.sock]\n", add: Expansion{AllowSockets: []string{"/run/a.sock"}},
			mode: "list", hosts: []string{"github.com", "unix:/run/a.sock"}},
		{name: "socket on any", initial: "network: any # all\n", add: Expansion{AllowSockets: []string{"/run/a.sock"}},
			mode: "list", hosts: []string{"any", "unix:/run/a.sock"}, keep: []string{"# all"}, added: 1},
		{name: "any keeps sockets", initial: "network:\n  - github.com\n  - unix:/run/a.sock\n", add: Expansion{Network: "any"},
			mode: "list", hosts: []string{"any", "github.com", "unix:/run/a.sock"}, added: 1},
		{name: "any and a socket", initial: commented, add: Expansion{Network: "any", AllowSockets: []string{"/run/a.sock"}},
			mode: "list", hosts: []string{"any", "unix:/run/a.sock"}, keep: []string{"# the project"}, added: 2},
		{name: "host on any list", initial: "network: [any, unix:/run/a.sock]\n", add: Expansion{AllowHosts: []string{"github.com"}},
			mode: "list", hosts: []string{"any", "unix:/run/a.sock"}},
		{name: "relative socket refused", initial: commented, add: Expansion{AllowSockets: []string{"run/a.sock"}}, wantErr: true},
		{name: "socket pattern refused", initial: commented, add: Expansion{AllowSockets: []string{"/run/*.sock"}}, wantErr: true},
		{name: "socket as a host refused", initial: commented, add: Expansion{AllowHosts: []string{"unix:/run/a.sock"}}, wantErr: true},
		{name: "any as a host refused", initial: commented, add: Expansion{AllowHosts: []string{"any"}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ScopeFile)
			if err := os.WriteFile(path, []byte(tt.initial), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := ExpandScope(context.Background(), dir, tt.add)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidExpansion) {
					t.Fatalf("err = %v, want ErrInvalidExpansion", err)
				}
				if got, _ := os.ReadFile(path); string(got) != tt.initial {
					t.Errorf("file changed on refusal:\n%s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if res.Scope.Network.Mode.String() != tt.mode || !slices.Equal(res.Scope.Network.Hosts, tt.hosts) {
				t.Errorf("network = %+v, want %s %v\n%s", res.Scope.Network, tt.mode, tt.hosts, got)
			}
			if len(res.Added["network"]) != tt.added {
				t.Errorf("added %v, want %d", res.Added, tt.added)
			}
			for _, k := range tt.keep {
				if !strings.Contains(string(got), k) {
					t.Errorf("lost %q:\n%s", k, got)
				}
			}
		})
	}
}
