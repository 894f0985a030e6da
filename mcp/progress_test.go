package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
)

// TestSearchProgressAndCancel runs grep and glob calls with a progress
// token on a project of 20,000 files: the server sends progress
// notifications that say how far the search has gone, and a client that
// cancels the call after two of them ends the search, which tools.org
// records as cancelled.
func TestSearchProgressAndCancel(t *testing.T) {
	root := t.TempDir()
	branch := filepath.Join(root, "sessions", "s", "branches", "main")
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(branch, 0o700); err != nil {
		t.Fatal(err)
	}
	// Big enough that the search outlasts the cancellation's way back to
	// the server on a loaded machine: a glob of 4,000 files can end first.
	for d := range 200 {
		dir := filepath.Join(proj, fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", f)), []byte("package d\n\nfunc F() {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(branch, "scope.yml"), []byte("paths:\n  read: [\""+proj+"/**\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := gateway.New(gateway.Options{SessionsDir: filepath.Join(root, "sessions"), Confine: exec.ConfineAllowUnconfined})
	srv := NewServer(Options{Gateway: g, BranchDir: branch, SessionID: "s", Branch: "main", ProgressEvery: time.Millisecond})
	for _, tt := range []struct {
		tool string
		args map[string]any
		// say is what the progress messages say of the search.
		say string
	}{
		{"grep", map[string]any{"pattern": "never in any file", "path": proj}, "searched"},
		{"glob", map[string]any{"pattern": "**/never.go", "path": proj}, "listed"},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var got []string
			client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, req.Params.Message)
					if len(got) == 2 {
						cancel()
					}
				},
			})
			st, ct := sdk.NewInMemoryTransports()
			ss, err := srv.Connect(context.Background(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			cs, err := client.Connect(context.Background(), ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			params := &sdk.CallToolParams{Name: tt.tool, Arguments: tt.args}
			params.SetProgressToken("search")
			res, err := cs.CallTool(ctx, params)
			if err == nil {
				t.Fatalf("the call ended before it was cancelled: %+v", res)
			}
			mu.Lock()
			if len(got) < 2 || !strings.Contains(got[1], tt.say) {
				t.Errorf("progress %q: want two messages saying what was %s", got, tt.say)
			}
			mu.Unlock()
			var e audit.Entry
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				es, _ := audit.ReadFile(filepath.Join(branch, "tools.org"), audit.Filter{})
				for _, x := range es {
					if x.Tool == tt.tool {
						e = x
					}
				}
				if e.CallID != "" {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(e.Error+e.Stderr+e.Summary, "context canceled") {
				t.Errorf("tools.org entry %+v: want the search cancelled", e)
			}
		})
	}
}
