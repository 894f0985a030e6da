package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
)

// TestElicitAnswers connects the go-sdk's client, answering elicitation as
// each case says, to a server of a real branch, and reads a file outside
// the scope: only once and session let it run; every other answer, a
// malformed one, a client error and a timeout deny it, and tools.org names
// the answer.
func TestElicitAnswers(t *testing.T) {
	for _, tt := range []struct {
		name    string
		handler func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error)
		answer  string
		ran     bool
		// clientFails: the go-sdk client, which speaks the protocol of
		// input requests, does not call again when its own handler fails or
		// its answer does not fit the form; the call never runs.
		clientFails bool
	}{
		{"once", accept("once"), gateway.AnswerOnce, true, false},
		{"session", accept("session"), gateway.AnswerSession, true, false},
		{"deny", accept("deny"), gateway.AnswerDeny, false, false},
		{"not a choice", accept("always"), "", false, true},
		{"accept without content", func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return &sdk.ElicitResult{Action: "accept"}, nil
		}, gateway.AnswerError, false, false},
		{"decline", action("decline"), gateway.AnswerDecline, false, false},
		{"cancel", action("cancel"), gateway.AnswerCancel, false, false},
		{"client error", func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			return nil, errors.New("no user")
		}, "", false, true},
		{"no answer in time", func(ctx context.Context, _ *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			time.Sleep(600 * time.Millisecond)
			return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "once"}}, nil
		}, gateway.AnswerTimeout, false, false},
		{"no elicitation", nil, "", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			branch := filepath.Join(root, "sessions", "s", "branches", "main")
			proj := filepath.Join(root, "proj")
			for _, d := range []string{branch, proj} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(branch, "scope.yml"), []byte("paths:\n  read: [\""+proj+"/**\"]\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			outside := filepath.Join(root, "outside.txt")
			if err := os.WriteFile(outside, []byte("outside-content\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			g := gateway.New(gateway.Options{SessionsDir: filepath.Join(root, "sessions"), Confine: exec.ConfineAllowUnconfined})
			srv := NewServer(Options{Gateway: g, BranchDir: branch, SessionID: "s", Branch: "main",
				Approvals: func() gateway.Approvals { return gateway.Approvals{Ask: true, Timeout: 300 * time.Millisecond} }})
			st, ct := sdk.NewInMemoryTransports()
			ctx := context.Background()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{ElicitationHandler: tt.handler})
			cs, err := client.Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": outside}})
			if tt.clientFails {
				if err == nil {
					t.Fatalf("the call succeeded: %+v", res)
				}
				// The offer was made and never answered: once its time is
				// up, it is recorded as denied with no answer in time.
				var es []audit.Entry
				for deadline := time.Now().Add(10 * time.Second); len(es) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
					es, _ = audit.ReadFile(filepath.Join(branch, "tools.org"), audit.Filter{})
				}
				if len(es) != 1 || es[0].Decision != audit.DecisionDenied || es[0].Answer != gateway.AnswerTimeout ||
					es[0].Channel != gateway.ChannelElicitation || es[0].Offered != "--read "+outside {
					t.Fatalf("entries %+v, want the unanswered offer denied", es)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			text := ""
			for _, c := range res.Content {
				if tc, ok := c.(*sdk.TextContent); ok {
					text += tc.Text
				}
			}
			if ran := !res.IsError && strings.Contains(text, "outside-content"); ran != tt.ran {
				t.Errorf("ran = %v, want %v: %s", ran, tt.ran, text)
			}
			es, err := audit.ReadFile(filepath.Join(branch, "tools.org"), audit.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, e := range es {
				if e.Tool == "read_file" {
					got = e.Answer
					if tt.answer != "" && e.Channel != gateway.ChannelElicitation {
						t.Errorf("channel %q", e.Channel)
					}
				}
			}
			if got != tt.answer {
				t.Errorf("tools.org answer %q, want %q", got, tt.answer)
			}
		})
	}
}

func accept(answer string) func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	return func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": answer}}, nil
	}
}

func action(a string) func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	return func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: a}, nil
	}
}

// TestForgedAnswer: an answer carried in a call's input responses counts
// only with a request state this server issued for that very call.
func TestForgedAnswer(t *testing.T) {
	root := t.TempDir()
	branch := filepath.Join(root, "sessions", "s", "branches", "main")
	if err := os.MkdirAll(branch, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(branch, "scope.yml"), []byte("paths:\n  read: [\"/nowhere/**\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "outside.txt")
	if err := os.WriteFile(outside, []byte("outside-content\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := gateway.New(gateway.Options{SessionsDir: filepath.Join(root, "sessions"), Confine: exec.ConfineAllowUnconfined})
	o := Options{Gateway: g, BranchDir: branch, SessionID: "s", Branch: "main", Approvals: askAlways}
	srv := NewServer(o)
	other := newSealer()
	st, ct := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{ElicitationHandler: accept("once")}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(args map[string]any) string {
		raw, _ := json.Marshal(args)
		return gateway.CallSum(policy.Call{Tool: "read_file", Args: raw})
	}
	for name, state := range map[string]string{
		"no state":    "",
		"garbage":     "abc.def",
		"another key": other.seal(offerState{Call: call(map[string]any{"path": outside}), Widen: "--read " + outside, Expires: time.Now().Add(time.Hour).UnixMilli()}),
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": outside},
			InputResponses: sdk.InputResponseMap{approvalInput: &sdk.ElicitResult{Action: "accept", Content: map[string]any{"answer": "once"}}},
			RequestState:   state})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.IsError {
			t.Errorf("%s: the forged answer let the call run", name)
		}
	}
	es, err := audit.ReadFile(filepath.Join(branch, "tools.org"), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 {
		t.Fatalf("%d entries, want 3", len(es))
	}
	for _, e := range es {
		if e.Decision != audit.DecisionDenied || e.Answer != gateway.AnswerError {
			t.Errorf("entry %+v, want a denial with answer error", e)
		}
	}
}

// askAlways offers with the default timeout.
func askAlways() gateway.Approvals { return gateway.Approvals{Ask: true} }
