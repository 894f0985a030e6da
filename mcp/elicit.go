package mcp

import (
	"context"
	"errors"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scopegate/scopegate/gateway"
)

// DefaultApprovalTimeout is how long an offer waits for the user's answer
// before the call is denied.
const DefaultApprovalTimeout = 2 * time.Minute

// newProtocol is the first MCP protocol version in which a server may not
// send requests while it serves one (it returns input requests instead);
// offers are made only to clients of earlier versions.
const newProtocol = "2026-07-28"

// The choices of the offer form.
var answerSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"answer": map[string]any{
			"type":        "string",
			"title":       "Let this call run?",
			"description": "once: this call only; session: widen this session's scope (recorded), then run; deny: refuse",
			"oneOf": []any{
				map[string]any{"const": gateway.AnswerOnce, "title": "Allow once"},
				map[string]any{"const": gateway.AnswerSession, "title": "Allow for this session (widen the scope)"},
				map[string]any{"const": gateway.AnswerDeny, "title": "Deny"},
			},
		},
	},
	"required": []string{"answer"},
}

// elicitation offers denied calls to the user of one MCP session through
// elicitation/create.
type elicitation struct {
	ss      *sdk.ServerSession
	timeout time.Duration
}

// approvals are the approval settings for a call, the timeout defaulted.
func (o Options) approvals() gateway.Approvals {
	if o.Approvals == nil {
		return gateway.Approvals{}
	}
	ap := o.Approvals()
	if ap.Timeout <= 0 {
		ap.Timeout = DefaultApprovalTimeout
	}
	return ap
}

// elicits reports whether the client of ss declared form elicitation, and
// whether it speaks newProtocol or later (offers as input requests).
func (o Options) elicits(ss *sdk.ServerSession, ap gateway.Approvals) (ok, roundTrip bool) {
	if !ap.Ask || ss == nil {
		return false, false
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false, false
	}
	if caps := ip.Capabilities.Elicitation; caps.Form == nil && caps.URL != nil {
		return false, false
	}
	return true, ip.ProtocolVersion >= newProtocol
}

// Channel names the channel in tools.org and scope changes.
func (elicitation) Channel() string { return gateway.ChannelElicitation }

// Ask sends the offer as a form and maps the client's answer: accept with
// once or session lets the call run; anything else is a denial.
func (e elicitation) Ask(ctx context.Context, o gateway.Offer) string {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	res, err := e.ss.Elicit(ctx, &sdk.ElicitParams{Mode: "form", Message: "scopegate: " + o.Text(), RequestedSchema: answerSchema})
	switch {
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return gateway.AnswerTimeout
	case err != nil:
		return gateway.AnswerError
	}
	return answerOf(res)
}

// answerOf maps a client's elicitation result to an answer.
func answerOf(res *sdk.ElicitResult) string {
	switch res.Action {
	case "accept":
		switch a, _ := res.Content["answer"].(string); a {
		case gateway.AnswerOnce, gateway.AnswerSession, gateway.AnswerDeny:
			return a
		}
		return gateway.AnswerError
	case "decline":
		return gateway.AnswerDecline
	case "cancel":
		return gateway.AnswerCancel
	}
	return gateway.AnswerError
}
