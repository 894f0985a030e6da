package server

import (
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/mcp"
)

// mcpHandlers holds one Streamable HTTP handler per scopegate session: an
// MCP session id handed out on /v1/sessions/A/mcp is known only to A's
// handler, so it can never carry calls onto session B's URL. An MCP session
// stays on the branch it was initialized on (?branch=, default current).
type mcpHandlers struct {
	mu       sync.Mutex
	sessions map[string]http.Handler
}

// mcpHandler serves POST/GET/DELETE /v1/sessions/{id}/mcp: the same server
// as `scopegate mcp`, behind the same token and Origin checks as every
// route. An unknown session or branch is 404 before MCP sees the request.
func (s *Server) mcpHandler() http.Handler {
	return s.api(s.opts.CallTimeout, func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		if _, err := s.reg.lookup(r.Context(), id, r.URL.Query().Get("branch")); err != nil {
			return err
		}
		s.mcpSession(id).ServeHTTP(w, r)
		return nil
	})
}

func (s *Server) mcpSession(id string) http.Handler {
	s.mcpHs.mu.Lock()
	defer s.mcpHs.mu.Unlock()
	if h, ok := s.mcpHs.sessions[id]; ok {
		return h
	}
	if s.mcpHs.sessions == nil {
		s.mcpHs.sessions = map[string]http.Handler{}
	}
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		e, err := s.reg.lookup(r.Context(), id, r.URL.Query().Get("branch"))
		if err != nil {
			return nil
		}
		return mcp.NewServer(mcp.Options{Gateway: s.opts.Gateway, BranchDir: e.dir, SessionID: e.session,
			Branch: e.branch, Version: s.opts.Version, Approvals: s.approvals, Warn: s.warn,
			Also: func(timeout time.Duration, beside string) gateway.Asker {
				return s.page.offers.asker(gateway.ViaMCP, timeout, beside)
			}})
	}, &sdk.StreamableHTTPOptions{Logger: s.log})
	s.mcpHs.sessions[id] = h
	return h
}
