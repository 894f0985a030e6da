package exec

import (
	"context"
	"sync/atomic"
)

// SearchProgress counts what a running grep or glob call has done, for a
// caller that reports progress while it runs (MCP's
// notifications/progress). The counts only grow and may be read at any
// time.
type SearchProgress struct {
	// Entries counts the directory entries listed, Files the files
	// searched (grep), Matches the matches kept.
	Entries, Files, Matches atomic.Int64
}

// progressKey is the context key of a *SearchProgress.
type progressKey struct{}

// WithSearchProgress returns a context that makes a grep or glob call run
// with it count into p.
func WithSearchProgress(ctx context.Context, p *SearchProgress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// searchProgressOf returns the SearchProgress ctx carries, or nil.
func searchProgressOf(ctx context.Context) *SearchProgress {
	p, _ := ctx.Value(progressKey{}).(*SearchProgress)
	return p
}

func (p *SearchProgress) addEntries(n int) {
	if p != nil {
		p.Entries.Add(int64(n))
	}
}

func (p *SearchProgress) addFiles(n int) {
	if p != nil {
		p.Files.Add(int64(n))
	}
}

func (p *SearchProgress) addMatches(n int) {
	if p != nil {
		p.Matches.Add(int64(n))
	}
}
