package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// toolStep is one tool call the scripted model makes.
type toolStep struct {
	name  string
	input map[string]any
}

// toolResult is what the agent sent back for one tool call.
type toolResult struct {
	content string
	isError bool
}

// mockAnthropic is a scripted stand-in for the Anthropic Messages API on
// loopback, streaming as the real API does (message_start, content blocks
// with input_json_delta, message_delta, message_stop). A request that
// offers tools and carries n tool results is answered with step n of the
// script, or a closing text once the script is done; any other request
// (titles, summaries) gets a short text. It records every tool result the
// agent sends back, and every request body.
type mockAnthropic struct {
	t      *testing.T
	script []toolStep
	url    string

	mu       sync.Mutex
	results  map[string]toolResult // by tool_use id
	bodies   []string
	requests int
}

func newMockAnthropic(t *testing.T, script []toolStep) *mockAnthropic {
	t.Helper()
	m := &mockAnthropic{t: t, script: script, results: map[string]toolResult{}}
	m.url = serveLoopback(t, http.HandlerFunc(m.serve))
	return m
}

// serveLoopback serves h on a free loopback port until the test ends and
// returns its base URL.
func serveLoopback(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

type anthropicRequest struct {
	Stream   bool              `json:"stream"`
	Model    string            `json:"model"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type contentBlock struct {
	Type      string          `json:"type"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

func (m *mockAnthropic) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.Contains(r.URL.Path, "count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":10}`)
		return
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		http.NotFound(w, r)
		return
	}
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	n := 0
	m.mu.Lock()
	m.bodies = append(m.bodies, string(body))
	m.requests++
	for _, msg := range req.Messages {
		var blocks []contentBlock
		if json.Unmarshal(msg.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type != "tool_result" {
				continue
			}
			n++
			m.results[b.ToolUseID] = toolResult{content: resultText(b.Content), isError: b.IsError}
		}
	}
	m.mu.Unlock()

	var block map[string]any
	stop := "end_turn"
	switch {
	case len(req.Tools) > 0 && n < len(m.script):
		s := m.script[n]
		block = map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%02d", n), "name": s.name, "input": s.input}
		stop = "tool_use"
	default:
		block = map[string]any{"type": "text", "text": "done"}
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "msg_mock", "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]int{"input_tokens": 10, "output_tokens": 5}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	event := func(name string, data any) {
		d, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, d)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_mock", "type": "message",
		"role": "assistant", "model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 10, "output_tokens": 1}}})
	if block["type"] == "tool_use" {
		input, _ := json.Marshal(block["input"])
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
		// The input arrives in pieces, as the real API streams it.
		half := len(input) / 2
		for _, part := range []string{string(input[:half]), string(input[half:])} {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
	} else {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": block["text"]}})
	}
	event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 5}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// resultText is the text of a tool_result's content: a string, or text
// blocks.
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct{ Type, Text string }
	if json.Unmarshal(raw, &blocks) == nil {
		var b strings.Builder
		for _, x := range blocks {
			b.WriteString(x.Text)
		}
		return b.String()
	}
	return string(raw)
}

// result returns the tool result of step i, failing the test when the agent
// never sent it.
func (m *mockAnthropic) result(i int) toolResult {
	m.t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.results[fmt.Sprintf("toolu_%02d", i)]
	if !ok {
		m.t.Fatalf("the agent sent no tool result for step %d (%s); %d requests seen", i, m.script[i].name, m.requests)
	}
	return r
}

// sawAnywhere reports whether s occurs in any request the agent sent.
func (m *mockAnthropic) sawAnywhere(s string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.bodies {
		if strings.Contains(b, s) {
			return true
		}
	}
	return false
}

// runClaude runs the real Claude Code (`claude -p`) in proj against the
// scripted model, with hook as its one PreToolUse hook (its settings and
// config below root); the test fails if Claude Code does.
func runClaude(t *testing.T, claude, root, proj string, model *mockAnthropic, hook map[string]any) {
	t.Helper()
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{
		map[string]any{"matcher": "*", "hooks": []any{hook}}}}})
	settingsFile := filepath.Join(root, "settings.json")
	if err := os.WriteFile(settingsFile, settings, 0o600); err != nil {
		t.Fatal(err)
	}
	runClaudeHeadless(t, claude, root, proj, settingsFile, model)
}
