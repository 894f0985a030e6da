package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
)

// approvalInput is the id of the offer among a result's input requests.
const approvalInput = "scopegate-approval"

// Clients of protocol newProtocol and later are not sent requests while a
// call is served: the call returns the offer as an input request, and the
// client calls again with the user's answer and the request state. The
// state names the call and the widening offered and when the offer expires,
// sealed with a key of this server, so that an answer is applied only to
// the call it was given for, and only in time.

// offerState is what a sealed request state holds.
type offerState struct {
	// ID names the offer among the server's pending ones.
	ID      string `json:"id,omitempty"`
	Call    string `json:"call"`
	Widen   string `json:"widen"`
	Expires int64  `json:"expires"`
}

// maxPending bounds the offers a server keeps waiting for their answer;
// past it, a denial is refused at once, as without approvals.
const maxPending = 1024

// unansweredSlack is how long past an offer's expiry its answer may still
// be on its way: only then is it recorded as unanswered, so that a late
// answer and the record of no answer are never both written.
const unansweredSlack = time.Second

// pendingOffers are the offers a server returned as input requests and
// whose answer has not come back: each is recorded as denied (answer
// timeout) when its time is up, unless its answer came first.
type pendingOffers struct {
	mu     sync.Mutex
	offers map[string]*time.Timer
}

// add keeps an offer until its answer comes or, past expires, records it
// with record; false when too many are waiting.
func (p *pendingOffers) add(id string, expires time.Time, record func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.offers) >= maxPending {
		return false
	}
	p.offers[id] = time.AfterFunc(time.Until(expires)+unansweredSlack, func() {
		if p.take(id) {
			record()
		}
	})
	return true
}

// take removes the offer id; false when it was not pending (answered,
// recorded, or never made).
func (p *pendingOffers) take(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.offers[id]
	if ok {
		t.Stop()
		delete(p.offers, id)
	}
	return ok
}

// sealer seals and opens request states with a key of its own.
type sealer struct {
	key [32]byte
}

func newSealer() *sealer {
	s := &sealer{}
	_, _ = rand.Read(s.key[:])
	return s
}

func (s *sealer) seal(st offerState) string {
	data, _ := json.Marshal(st)
	mac := hmac.New(sha256.New, s.key[:])
	mac.Write(data)
	return base64.RawURLEncoding.EncodeToString(data) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

var errBadState = errors.New("request state not issued by this server")

func (s *sealer) open(state string) (offerState, error) {
	for i := range len(state) {
		if state[i] != '.' {
			continue
		}
		data, err1 := base64.RawURLEncoding.DecodeString(state[:i])
		sum, err2 := base64.RawURLEncoding.DecodeString(state[i+1:])
		if err1 != nil || err2 != nil {
			return offerState{}, errBadState
		}
		mac := hmac.New(sha256.New, s.key[:])
		mac.Write(data)
		if !hmac.Equal(sum, mac.Sum(nil)) {
			return offerState{}, errBadState
		}
		var st offerState
		if json.Unmarshal(data, &st) != nil {
			return offerState{}, errBadState
		}
		return st, nil
	}
	return offerState{}, errBadState
}

// roundTrip is the approval of a client of the new protocol: either the
// offer to return as an input request, or, on the call that carries the
// answer, the channel that gives it. An offer whose answer never comes is
// recorded as denied when its time is up.
func (o Options) roundTrip(t gateway.Target, call policy.Call, params *sdk.CallToolParamsRaw, timeout time.Duration) (*sdk.CallToolResult, gateway.Asker) {
	if resp, ok := params.InputResponses[approvalInput]; ok {
		return nil, o.answered(params.RequestState, resp)
	}
	off, ok := o.Gateway.Offerable(t, call)
	if !ok {
		return nil, nil
	}
	var id [16]byte
	_, _ = rand.Read(id[:])
	expires := time.Now().Add(timeout)
	st := offerState{ID: hex.EncodeToString(id[:]), Call: gateway.CallSum(call), Widen: off.Widening(), Expires: expires.UnixMilli()}
	if !o.pending.add(st.ID, expires, func() {
		if _, err := o.Gateway.Unanswered(context.Background(), t, off, gateway.ChannelElicitation, gateway.AnswerTimeout); err != nil {
			o.Warn(fmt.Sprintf("record the unanswered offer of %s: %v", off.Summary(), err))
		}
	}) {
		return nil, nil
	}
	return &sdk.CallToolResult{
		InputRequests: sdk.InputRequestMap{approvalInput: &sdk.ElicitParams{Mode: "form",
			Message: "scopegate: " + off.Text(), RequestedSchema: answerSchema}},
		RequestState: o.seal.seal(st),
	}, nil
}

// answered is the channel of a call that carries the user's answer.
func (o Options) answered(state string, resp sdk.InputResponse) gateway.Asker {
	a := answeredAsker{answer: gateway.AnswerError}
	st, err := o.seal.open(state)
	if err != nil {
		return a
	}
	// Answered (in time or not), the offer is recorded with this call.
	o.pending.take(st.ID)
	a.call, a.widen = st.Call, st.Widen
	if time.Now().UnixMilli() > st.Expires {
		a.answer = gateway.AnswerTimeout
		return a
	}
	if r, ok := resp.(*sdk.ElicitResult); ok {
		a.answer = answerOf(r)
	}
	return a
}

// answeredAsker gives an answer obtained before the call, if the offer is
// the one it was given for.
type answeredAsker struct {
	answer, call, widen string
}

func (answeredAsker) Channel() string { return gateway.ChannelElicitation }

func (a answeredAsker) Ask(_ context.Context, o gateway.Offer) string {
	if a.answer != gateway.AnswerTimeout && (gateway.CallSum(o.Call) != a.call || o.Widening() != a.widen) {
		return gateway.AnswerError
	}
	return a.answer
}
