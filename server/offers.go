package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/scopegate/scopegate/gateway"
	"github.com/scopegate/scopegate/policy"
)

// ChannelPage is the page's channel in tools.org (:CHANNEL: page) and in
// the scope changes its answers make.
const ChannelPage = "page"

// hookAskLimit bounds how long a hook's call waits on the page: the CLI's
// hook gives up after 20 s and denies, and the agents run the tool when a
// hook outlives their own timeout, so the page's answer must come well
// before either.
const hookAskLimit = 15 * time.Second

// pageGrace is how long offers on the page outlive the last page closing:
// time for a reload, or for a page to reconnect, before they are denied.
const pageGrace = 10 * time.Second

// keptSettled is how many answered offers the page is told about.
const keptSettled = 50

// offers are the calls waiting for an answer on the page, from every
// channel the page is one of, and the pages that are open: an offer is
// made only while one is, and ends (denied) when the last one has been gone
// for pageGrace. It is safe for concurrent use.
type offers struct {
	// grace is pageGrace (shorter in tests).
	grace time.Duration

	mu sync.Mutex
	// ended says the server is shutting down: nothing more is held, and
	// what is held is denied.
	ended   bool
	open    int
	gone    chan struct{} // closed when the pages have been gone for pageGrace
	goneT   *time.Timer   // counts pageGrace down while no page is open
	held    map[string]*heldOffer
	settled []settledOffer // the last keptSettled answered, oldest first
	version uint64         // bumped on every change of held or settled
	subs    wakers
}

func newOffers() *offers {
	return &offers{grace: pageGrace, gone: make(chan struct{}), held: map[string]*heldOffer{}, subs: wakers{}}
}

// heldOffer is one call waiting on the page.
type heldOffer struct {
	view offerView
	// ctx is the context its Ask was given: a claim of the answer is made
	// in it, so that where the page is one of several channels, the first
	// answer of any counts.
	ctx context.Context
	// answer receives the page's answer, once.
	answer chan string
}

// offerView is what the page shows of an offer.
type offerView struct {
	ID        string            `json:"id"`
	Session   string            `json:"session"`
	Branch    string            `json:"branch"`
	Via       string            `json:"via"`
	Channels  []string          `json:"channels"`
	CallID    string            `json:"call_id,omitempty"`
	Tool      string            `json:"tool"`
	Summary   string            `json:"summary"`
	Reason    string            `json:"reason"`
	Message   string            `json:"message"`
	Widening  string            `json:"widening"`
	Widenings []policy.Widening `json:"widenings"`
	Created   time.Time         `json:"created"`
	Expires   time.Time         `json:"expires"`
}

// settledOffer is how an offer the page showed ended.
type settledOffer struct {
	ID      string    `json:"id"`
	Summary string    `json:"summary"`
	Answer  string    `json:"answer"`
	Channel string    `json:"channel"`
	Time    time.Time `json:"time"`
}

// pageOpened counts a page that connected.
func (o *offers) pageOpened() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.open++
	if o.goneT != nil {
		o.goneT.Stop()
		o.goneT = nil
	}
}

// pageClosed counts a page that went away; with the last one, the offers
// it held end after pageGrace unless a page comes back.
func (o *offers) pageClosed() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.open--
	if o.open > 0 {
		return
	}
	gone := o.gone
	o.goneT = time.AfterFunc(o.grace, func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.open == 0 && o.gone == gone && !o.ended {
			close(gone)
			o.gone = make(chan struct{})
		}
	})
}

// isOpen reports whether a page is open now: only then is a call held.
func (o *offers) isOpen() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.open > 0 && !o.ended
}

// end denies what is held and holds nothing more: the server is shutting
// down, and its pages with it.
func (o *offers) end() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ended {
		return
	}
	o.ended = true
	if o.goneT != nil {
		o.goneT.Stop()
	}
	close(o.gone)
}

// subscribe has wake signalled on every change of the offers.
func (o *offers) subscribe(wake chan<- struct{}) func() {
	return o.subs.add(&o.mu, wake)
}

// changed bumps the version and wakes the pages; o.mu is held.
func (o *offers) changed() {
	o.version++
	o.subs.wake()
}

// offersView is the page's list of offers.
type offersView struct {
	Pending []offerView    `json:"pending"`
	Settled []settledOffer `json:"settled"`
}

// snapshot is the offers as the page shows them, oldest first, and their
// version.
func (o *offers) snapshot() (offersView, uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	v := offersView{Pending: []offerView{}, Settled: slices.Clone(o.settled)}
	for _, h := range o.held {
		v.Pending = append(v.Pending, h.view)
	}
	slices.SortFunc(v.Pending, func(a, b offerView) int { return a.Created.Compare(b.Created) })
	if v.Settled == nil {
		v.Settled = []settledOffer{}
	}
	return v, o.version
}

// settle ends an offer with how it was answered; o.mu is held.
func (o *offers) settle(id, answer, channel string) {
	h, ok := o.held[id]
	if !ok {
		return
	}
	delete(o.held, id)
	o.settled = append(o.settled, settledOffer{ID: id, Summary: h.view.Summary, Answer: answer, Channel: channel, Time: time.Now()})
	if len(o.settled) > keptSettled {
		o.settled = slices.Delete(o.settled, 0, len(o.settled)-keptSettled)
	}
	o.changed()
}

// errAnswered is the answer to an answer that came too late.
var errAnswered = errors.New("already answered")

// answer gives the page's answer to the offer id. Of several answers to
// one offer, from pages or from other channels, the first counts; a later
// one is errAnswered, wrapped with the answer that counted.
func (o *offers) answer(id, answer string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	h, ok := o.held[id]
	if !ok {
		for _, s := range o.settled {
			if s.ID == id {
				return fmt.Errorf("%w: %s through %s", errAnswered, s.Answer, s.Channel)
			}
		}
		return fmt.Errorf("no offer %q waits for an answer", id)
	}
	if !gateway.Claim(h.ctx, answer, ChannelPage) {
		var a *gateway.Answered
		if errors.As(context.Cause(h.ctx), &a) {
			return fmt.Errorf("%w: %s through %s", errAnswered, a.Answer, a.Channel)
		}
		return errAnswered
	}
	h.answer <- answer
	o.settle(id, answer, ChannelPage)
	return nil
}

// pageAsker puts the offers of one request on the page.
type pageAsker struct {
	o       *offers
	via     string
	timeout time.Duration
	// deadline, when set, bounds every offer of the request together (a
	// hook's several calls must all be answered within the hook's time).
	deadline time.Time
	// also names the channel the page is asked beside, if any.
	also string
}

// asker is the page's channel for a request that came through via, each of
// whose offers waits at most timeout; nil when no page is open.
func (o *offers) asker(via gateway.Via, timeout time.Duration, also string) gateway.Asker {
	if !o.isOpen() {
		return nil
	}
	return &pageAsker{o: o, via: string(via), timeout: timeout, also: also}
}

func (a *pageAsker) Channel() string { return ChannelPage }

// Ask shows the offer on the page and waits for its answer, at most the
// timeout: no answer in time, or the pages gone for pageGrace, is
// AnswerTimeout.
func (a *pageAsker) Ask(ctx context.Context, off gateway.Offer) string {
	var idb [12]byte
	_, _ = rand.Read(idb[:])
	now := time.Now()
	timeout := a.timeout
	if !a.deadline.IsZero() {
		timeout = min(timeout, a.deadline.Sub(now))
	}
	if timeout <= 0 {
		return gateway.AnswerTimeout
	}
	h := &heldOffer{ctx: ctx, answer: make(chan string, 1), view: offerView{
		ID: hex.EncodeToString(idb[:]), Via: a.via, Channels: []string{ChannelPage}, CallID: off.CallID,
		Tool: off.Call.Tool, Summary: off.Summary(), Reason: string(off.Decision.Reason), Message: off.Decision.Message,
		Widening: off.Widening(), Widenings: off.Widenings, Created: now, Expires: now.Add(timeout)}}
	if a.also != "" {
		h.view.Channels = append(h.view.Channels, a.also)
	}
	if off.BranchDir != "" {
		h.view.Branch = filepath.Base(off.BranchDir)
		h.view.Session = filepath.Base(filepath.Dir(filepath.Dir(off.BranchDir)))
	}
	a.o.mu.Lock()
	gone := a.o.gone
	if a.o.open == 0 || a.o.ended {
		a.o.mu.Unlock()
		return gateway.AnswerTimeout
	}
	a.o.held[h.view.ID] = h
	a.o.changed()
	a.o.mu.Unlock()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	answer, channel := gateway.AnswerTimeout, ChannelPage
	select {
	case ans := <-h.answer:
		return ans // settled by the answer
	case <-timer.C:
	case <-gone:
	case <-ctx.Done():
		answer = gateway.AnswerError
		var won *gateway.Answered
		if errors.As(context.Cause(ctx), &won) {
			answer, channel = won.Answer, won.Channel
		}
	}
	a.o.mu.Lock()
	defer a.o.mu.Unlock()
	select {
	case ans := <-h.answer:
		// Answered on the page as the wait ended.
		return ans
	default:
	}
	a.o.settle(h.view.ID, answer, channel)
	return answer
}
