// Package mcp serves scopegate's tools to any MCP client over the official
// go-sdk: the tools of the contract (from policy.ToolSpecs, the one table),
// the branch's scope.yml and tools.org as read-only resources. Every tool
// call goes through the gateway like any call — decided, run confined,
// audited (:MODE: mcp), counted with via="mcp" — whichever transport
// carries it (stdio for `scopegate mcp`, Streamable HTTP in serve). A call
// denied for a scope reason is offered to the user through elicitation
// when the client declared it (elicit.go).
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/exec"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
	"github.com/scopegate/scopegate/sessions"
)

// Options configure a server for one session branch.
type Options struct {
	// Gateway decides and runs the calls. Required.
	Gateway *gateway.Gateway
	// BranchDir is the session branch the calls are made on. Required.
	BranchDir string
	// SessionID and Branch name the branch in resource URIs.
	SessionID, Branch string
	// Version is scopegate's version, told to clients.
	Version string
	// ProgressEvery is the interval of progress notifications of a
	// running shell call (default 1s).
	ProgressEvery time.Duration
	// Approvals, read for every call, says whether a call denied for a
	// scope reason is offered to the user (config.yml approvals: ask) and
	// how long an offer waits for the answer (DefaultApprovalTimeout when
	// zero); no answer in time is a denial. Nil offers nothing.
	Approvals func() gateway.Approvals
	// Also, when set, gives for each call another channel its offer goes
	// through, or nil when there is none now: alone where the client cannot
	// ask (beside is ""), and beside elicitation where it can (beside is
	// its channel; the first answer wins).
	Also func(timeout time.Duration, beside string) gateway.Asker
	// Warn receives what the server could not do outside a call (record
	// an unanswered offer); nil drops it.
	Warn func(string)

	// seal seals the request states of offers made as input requests;
	// pending are those offers until answered or recorded as unanswered.
	seal    *sealer
	pending *pendingOffers
}

// NewServer returns an MCP server of one session branch.
func NewServer(o Options) *sdk.Server {
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = time.Second
	}
	o.seal = newSealer()
	o.pending = &pendingOffers{offers: map[string]*time.Timer{}}
	if o.Warn == nil {
		o.Warn = func(string) {}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "scopegate", Title: "scopegate", Version: o.Version},
		&sdk.ServerOptions{
			Instructions: "Every tool call is decided against this session's scope.yml and run confined; " +
				"a denied call comes back as an error whose text says what the user could widen.",
			Capabilities: &sdk.ServerCapabilities{},
		})
	for _, spec := range policy.ToolSpecs() {
		s.AddTool(tool(spec), o.handler(spec))
	}
	for _, r := range []struct{ file, mime, what string }{
		{sessions.ScopeFile, "application/yaml", "what the agent may do: the branch's scope"},
		{audit.LogFile, "text/x-org", "what the agent has done: the branch's audit log"},
	} {
		uri := o.resourceURI(r.file)
		path := filepath.Join(o.BranchDir, r.file)
		s.AddResource(&sdk.Resource{URI: uri, Name: r.file, MIMEType: r.mime,
			Description: fmt.Sprintf("%s (%s/%s), read-only", r.what, o.SessionID, o.Branch)},
			func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				data, err := os.ReadFile(path)
				if os.IsNotExist(err) {
					data, err = nil, nil
				}
				if err != nil {
					return nil, fmt.Errorf("read %s: %w", r.file, err)
				}
				text := string(data)
				if text == "" {
					// An empty text is no text on the wire: say what it means.
					text = "# " + r.file + " is empty or missing\n"
				}
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: r.mime, Text: text}}}, nil
			})
	}
	return s
}

// resourceURI names a file of the branch.
func (o Options) resourceURI(file string) string {
	return fmt.Sprintf("scopegate://sessions/%s/branches/%s/%s", o.SessionID, o.Branch, file)
}

// callResultSchema is the output schema of every tool: the call result of
// the contract (docs/reference.md, The call and the decision).
var callResultSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"call_id":  map[string]any{"type": "string"},
		"decision": map[string]any{"type": "object"},
		"result":   map[string]any{"type": "object"},
	},
	"required": []string{"call_id", "decision"},
}

// tool is the MCP tool of one spec of the table, its annotations set from
// the spec's hints.
func tool(spec policy.ToolSpec) *sdk.Tool {
	destructive, openWorld := spec.Hints.Destructive, spec.Hints.OpenWorld
	return &sdk.Tool{
		Name: spec.Name, Title: spec.Title, Description: spec.Description,
		InputSchema: spec.InputSchema(), OutputSchema: callResultSchema,
		Annotations: &sdk.ToolAnnotations{Title: spec.Title, ReadOnlyHint: spec.Hints.ReadOnly,
			DestructiveHint: &destructive, IdempotentHint: spec.Hints.Idempotent, OpenWorldHint: &openWorld},
	}
}

// handler runs one tool call through the gateway. Arguments that do not fit
// the tool are a JSON-RPC invalid-params error; a denial is a tool result
// with isError and scopegate's message.
func (o Options) handler(spec policy.ToolSpec) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		raw := req.Params.Arguments
		if err := spec.CheckArgs(raw); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		if token := req.Params.GetProgressToken(); token != nil {
			switch spec.Name {
			case policy.ToolShell:
				stop := o.progress(ctx, req.Session, token, spec.Name, nil)
				defer stop()
			case policy.ToolGrep, policy.ToolGlob:
				search := new(exec.SearchProgress)
				ctx = exec.WithSearchProgress(ctx, search)
				stop := o.progress(ctx, req.Session, token, spec.Name, search)
				defer stop()
			}
		}
		t := gateway.Target{BranchDir: o.BranchDir, Via: gateway.ViaMCP}
		c := policy.Call{Tool: spec.Name, Args: raw}
		ap := o.approvals()
		also := func(beside string) gateway.Asker {
			if !ap.Ask || o.Also == nil {
				return nil
			}
			return o.Also(ap.Timeout, beside)
		}
		switch ok, roundTrip := o.elicits(req.Session, ap); {
		case ok && roundTrip:
			var offer *sdk.CallToolResult
			if offer, t.Ask = o.roundTrip(t, c, req.Params, ap.Timeout); offer != nil {
				return offer, nil
			}
		case ok:
			t.Ask = elicitation{ss: req.Session, timeout: ap.Timeout}
			if a := also(gateway.ChannelElicitation); a != nil {
				t.Ask = gateway.FirstAnswer(t.Ask, a)
			}
		default:
			if a := also(""); a != nil {
				t.Ask = a
			}
		}
		res, err := o.Gateway.Call(ctx, t, c)
		if err != nil && res.CallID == "" {
			return nil, fmt.Errorf("scopegate: %w", err)
		}
		structured, jerr := toMap(res)
		if jerr != nil {
			return nil, jerr
		}
		out := &sdk.CallToolResult{StructuredContent: structured}
		switch {
		case !res.Decision.Allowed:
			out.IsError = true
			out.Content = []sdk.Content{&sdk.TextContent{Text: res.Decision.Message}}
		default:
			text, failed := resultText(spec.Name, res.Result)
			out.IsError = failed
			out.Content = []sdk.Content{&sdk.TextContent{Text: text}}
		}
		return out, nil
	}
}

// progress sends a progress notification every ProgressEvery while a call
// runs: its progress is the seconds it has run (a value that always
// grows), its message for a search of tool (search not nil) how far it
// has gone.
// The returned function stops it. The client cancels the call as any
// request (notifications/cancelled), which ends ctx.
func (o Options) progress(ctx context.Context, ss *sdk.ServerSession, token any, tool string, search *exec.SearchProgress) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		t := time.NewTicker(o.ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				secs := now.Sub(start).Seconds()
				p := &sdk.ProgressNotificationParams{ProgressToken: token, Progress: secs, Message: fmt.Sprintf("running for %.0f s", secs)}
				if search != nil {
					p.Message = searchProgress(tool, search, secs)
				}
				_ = ss.NotifyProgress(ctx, p)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// searchProgress says how far a search has gone: the files it searched
// (grep) or the entries it listed (glob), and the matches it kept.
func searchProgress(tool string, p *exec.SearchProgress, secs float64) string {
	if tool == policy.ToolGrep {
		return fmt.Sprintf("searched %d files (%d entries listed), %d matches, in %.0f s", p.Files.Load(), p.Entries.Load(), p.Matches.Load(), secs)
	}
	return fmt.Sprintf("listed %d entries, %d matches, in %.0f s", p.Entries.Load(), p.Matches.Load(), secs)
}

// resultText is what a model reads of a result: a shell call's output and
// exit status, a file tool's payload as JSON. failed marks a shell call
// that exited non-zero or a file tool that failed.
func resultText(tool string, result any) (string, bool) {
	r, ok := result.(exec.Result)
	if ok && tool == policy.ToolReadFile && r.Content != nil && r.ExitCode == 0 {
		return *r.Content, false
	}
	if !ok || tool != policy.ToolShell {
		data, _ := json.Marshal(result)
		failed := ok && r.ExitCode != 0
		return string(data), failed
	}
	var b strings.Builder
	b.WriteString(r.Stdout)
	if r.Stderr != "" {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[stderr]\n" + r.Stderr)
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[exit code %d]", r.ExitCode)
	if r.TimedOut {
		b.WriteString(" (timed out)")
	}
	if r.Truncated {
		b.WriteString(" (output truncated)")
	}
	return b.String(), r.ExitCode != 0
}

func toMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return m, nil
}
