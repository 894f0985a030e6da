package server

import (
	"context"
	"sync"
	"time"
)

// chartMinutes is how far back the page's chart of denials goes.
const chartMinutes = 60

// denialRing keeps the denials counted so far, by reason, as they were at
// the start of each of the last chartMinutes minutes: the page's chart is
// their differences. Sampling the counters once a minute keeps the
// decision path free of it.
type denialRing struct {
	mu      sync.Mutex
	samples []denialSample // oldest first
}

// denialSample is the counts at a time.
type denialSample struct {
	at     time.Time
	counts map[string]float64
}

// denialMinute is one bar of the chart: the denials by reason from Start
// for a minute (to now, for the minute under way).
type denialMinute struct {
	Start  time.Time          `json:"start"`
	Counts map[string]float64 `json:"counts"`
}

// add keeps the counts at now, the first of its minute only.
func (d *denialRing) add(now time.Time, counts map[string]float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := len(d.samples); n > 0 && d.samples[n-1].at.Truncate(time.Minute).Equal(now.Truncate(time.Minute)) {
		return
	}
	d.samples = append(d.samples, denialSample{at: now, counts: counts})
	if len(d.samples) > chartMinutes+1 {
		d.samples = d.samples[len(d.samples)-chartMinutes-1:]
	}
}

// chart is the denials by reason of each minute sampled in the last hour,
// the one under way last (counted up to current, the counts now).
func (d *denialRing) chart(now time.Time, current map[string]float64) []denialMinute {
	d.add(now, current)
	d.mu.Lock()
	defer d.mu.Unlock()
	out := []denialMinute{}
	for i, s := range d.samples {
		next := current
		if i+1 < len(d.samples) {
			next = d.samples[i+1].counts
		}
		if now.Sub(s.at) > chartMinutes*time.Minute {
			continue
		}
		m := denialMinute{Start: s.at.Truncate(time.Minute), Counts: map[string]float64{}}
		for reason, n := range next {
			if dn := n - s.counts[reason]; dn > 0 {
				m.Counts[reason] = dn
			}
		}
		out = append(out, m)
	}
	return out
}

// sampleDenials samples counts at the start of every minute until ctx
// ends.
func (d *denialRing) sampleDenials(ctx context.Context, counts func() map[string]float64) {
	for {
		now := time.Now()
		d.add(now, counts())
		t := time.NewTimer(now.Truncate(time.Minute).Add(time.Minute).Sub(now))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
