package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/scopegate/scopegate/agents"
	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/server/client"
)

// ProjectDirHeader carries a hook's project directory; see
// [client.ProjectDirHeader].
const ProjectDirHeader = client.ProjectDirHeader

// hook serves POST /v1/hooks/{agent}: the agent's hook JSON in, its answer
// out, by the same code as `scopegate hook`. Claude Code runs the tool when
// an HTTP hook answers anything but 2xx, so every failure here (a missing
// token, a body over the limit, an unreadable body) is a 200 carrying a
// deny with its reason, never an error status.
func (s *Server) hook(agent string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer := func(a agents.Answer) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write(a.Stdout)
		}
		if !s.authorized(r) {
			answer(agents.Refuse(agent, "the hook request has no valid bearer token (Authorization header)"))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, s.opts.MaxBody+1))
		if err != nil || int64(len(body)) > s.opts.MaxBody {
			answer(agents.Refuse(agent, "the hook request body could not be read or is too large"))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
		defer cancel()
		o := s.opts.Hooks
		o.ProjectDir = r.Header.Get(ProjectDirHeader)
		if env := r.Header.Get(client.AgentEnvHeader); env != "" {
			if err := json.Unmarshal([]byte(env), &o.Agent); err != nil {
				answer(agents.Refuse(agent, "the hook request's "+client.AgentEnvHeader+" header is not the agent's environment as JSON"))
				return
			}
		}
		ap := s.approvals()
		o.Approvals, o.ApprovalTimeout = ap.Ask, ap.Timeout
		// Where the agent will not ask its user, the page asks while one is
		// open, within the hook's own time.
		if a := s.pageAsk(gateway.ViaHook, s.hookLimit); a != nil {
			o.Ask = a
		}
		answer(s.opts.Gateway.Hook(ctx, agent, body, o))
	})
}
