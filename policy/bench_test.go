package policy_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/scopegate/scopegate/policy"
)

// BenchmarkDecide measures whole decisions on a real filesystem: every
// symlink resolution, hard-link check and glob match included.
func BenchmarkDecide(b *testing.B) {
	root := b.TempDir()
	proj := filepath.Join(root, "work", "proj")
	for rel, c := range map[string]string{"README.md": "# x\n", "src/main.go": "package main\n", "go.mod": "module x\n"} {
		writeFileB(b, filepath.Join(proj, rel), c)
	}
	env := policy.Env{Home: filepath.Join(root, "home")}
	base := policy.Document{
		Paths: policy.PathRules{
			Read:  []string{proj + "/**", "/usr/share/doc/**"},
			Write: []string{proj + "/**"},
			Deny:  []string{"**/.git/**", "**/.env", "**/node_modules/**", "**/runtime/**"},
		},
		Shell: policy.ShellRules{Allow: []string{"ls", "find", "grep", "git", "rg", "cat", "go", "python3"}, Deny: []string{"rm -rf", "sudo"}},
	}
	wide := base
	wide.Paths.Read = append([]string(nil), base.Paths.Read...)
	wide.Paths.Deny = append([]string(nil), base.Paths.Deny...)
	for i := 0; len(wide.Paths.Read)+len(wide.Paths.Write)+len(wide.Paths.Deny) < 50; i++ {
		wide.Paths.Read = append(wide.Paths.Read, fmt.Sprintf("/srv/data%d/**", i))
		wide.Paths.Deny = append(wide.Paths.Deny, fmt.Sprintf("**/secret%d/**", i))
	}
	readCall := policy.Call{Tool: policy.ToolReadFile, Args: mustJSON(map[string]any{"path": filepath.Join(proj, "src/main.go")})}
	pipeline := policy.Call{Tool: policy.ToolShell, Cwd: proj, Args: mustJSON(map[string]any{
		"command": "cat README.md | grep -v x | rg -n main src/ 2>/dev/null | ls -la > build.log 2>&1 | git log --oneline -5 >> build.log"})}
	mem := policy.Env{Home: env.Home, FS: newMemFS(proj, "README.md", "src/main.go", "go.mod")}
	for _, bc := range []struct {
		name string
		doc  policy.Document
		call policy.Call
		env  policy.Env
	}{
		{"read_file", base, readCall, mem},
		{"pipeline5_redirects", base, pipeline, mem},
		{"scope50_read_file", wide, readCall, mem},
		{"scope50_pipeline5", wide, pipeline, mem},
		{"realfs/read_file", base, readCall, env},
		{"realfs/pipeline5_redirects", base, pipeline, env},
		{"realfs/scope50_read_file", wide, readCall, env},
	} {
		env := bc.env
		sc, err := policy.Compile(bc.doc, env)
		if err != nil {
			b.Fatal(err)
		}
		if d := sc.Decide(bc.call, env); !d.Allowed {
			b.Fatalf("%s: denied: %s", bc.name, d.Message)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sc.Decide(bc.call, env)
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	doc := policy.Document{Paths: policy.PathRules{Read: []string{"/tmp/**"}}, Shell: policy.ShellRules{Allow: []string{"ls", "git log"}}}
	for b.Loop() {
		if _, err := policy.Compile(doc, policy.Env{}); err != nil {
			b.Fatal(err)
		}
	}
}

func mustJSON(v any) json.RawMessage {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return out
}

func writeFileB(b *testing.B, path, content string) {
	b.Helper()
	if err := mkfile(path, content); err != nil {
		b.Fatal(err)
	}
}

// memFS is an in-memory policy.FS: directories and regular files below a
// root, for measuring decisions without the kernel's cost of lstat. Like
// an in-memory filesystem, it keeps each file's information and hands it
// out.
type memFS struct {
	nodes map[string]*memInfo
}

func newMemFS(root string, files ...string) *memFS {
	m := &memFS{nodes: map[string]*memInfo{}}
	add := func(p string, dir bool) {
		m.nodes[p] = &memInfo{name: filepath.Base(p), dir: dir, st: syscall.Stat_t{Nlink: 1}}
	}
	add("/", true)
	for d := root; d != "/"; d = filepath.Dir(d) {
		add(d, true)
	}
	for _, f := range files {
		p := filepath.Join(root, f)
		add(p, false)
		for d := filepath.Dir(p); d != root; d = filepath.Dir(d) {
			add(d, true)
		}
	}
	return m
}

type memInfo struct {
	name string
	dir  bool
	st   syscall.Stat_t
}

func (i *memInfo) Name() string       { return i.name }
func (i *memInfo) Size() int64        { return 0 }
func (i *memInfo) ModTime() time.Time { return time.Time{} }
func (i *memInfo) IsDir() bool        { return i.dir }
func (i *memInfo) Sys() any           { return &i.st }
func (i *memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}

func (m *memFS) Lstat(name string) (fs.FileInfo, error) {
	info, ok := m.nodes[name]
	if !ok {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
	}
	return info, nil
}
func (m *memFS) Stat(name string) (fs.FileInfo, error) { return m.Lstat(name) }
func (m *memFS) Readlink(name string) (string, error) {
	return "", &fs.PathError{Op: "readlink", Path: name, Err: syscall.EINVAL}
}
func (m *memFS) ReadDir(name string) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	for p, info := range m.nodes {
		if filepath.Dir(p) == name && p != name {
			out = append(out, fs.FileInfoToDirEntry(info))
		}
	}
	return out, nil
}
func (m *memFS) ReadFile(name string) ([]byte, error) {
	if info, ok := m.nodes[name]; ok && !info.dir {
		return nil, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}
