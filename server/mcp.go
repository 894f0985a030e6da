package server

import (
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scopegate/scopegate/mcp"
)

// mcpHandler serves MCP over Streamable HTTP at /v1/sessions/{id}/mcp
// (?branch= selects a branch, default current): the same server as
// `scopegate mcp`, behind the same token and Origin checks as every route.
func (s *Server) mcpHandler() http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		e, err := s.reg.lookup(r.Context(), r.PathValue("id"), r.URL.Query().Get("branch"))
		if err != nil {
			return nil
		}
		return mcp.NewServer(mcp.Options{Gateway: s.opts.Gateway, BranchDir: e.dir, SessionID: e.session,
			Branch: e.branch, Version: s.opts.Version})
	}, &sdk.StreamableHTTPOptions{Logger: s.log})
	return s.api(s.opts.CallTimeout, func(w http.ResponseWriter, r *http.Request) error {
		if _, err := s.reg.lookup(r.Context(), r.PathValue("id"), r.URL.Query().Get("branch")); err != nil {
			return err
		}
		h.ServeHTTP(w, r)
		return nil
	})
}
