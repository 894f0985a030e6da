package server

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/sessions"
)

// Event is one audited decision with the branch it was made on: an element
// of GET /v1/events.
type Event struct {
	SessionID string `json:"session_id"`
	Branch    string `json:"branch"`
	audit.Entry
}

// branchRef names one branch directory of the sessions root.
type branchRef struct {
	session, branch, dir string
}

// listBranches lists <root>/<session>/branches/<branch> for every valid
// session id and branch name.
func listBranches(root string) ([]branchRef, error) {
	ids, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []branchRef
	for _, id := range ids {
		if !id.IsDir() || sessions.ValidateID(id.Name()) != nil {
			continue
		}
		bdir := filepath.Join(root, id.Name(), "branches")
		names, err := os.ReadDir(bdir)
		if err != nil {
			continue // a session being created or removed
		}
		for _, b := range names {
			if b.IsDir() && sessions.ValidateBranch(b.Name()) == nil {
				out = append(out, branchRef{session: id.Name(), branch: b.Name(), dir: filepath.Join(bdir, b.Name())})
			}
		}
	}
	return out, nil
}

// parseFilter reads ?since=RFC3339&decision= .
func parseFilter(r *http.Request) (audit.Filter, error) {
	var f audit.Filter
	if v := r.URL.Query().Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return f, errorf(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("since %q: want RFC 3339", v))
		}
		f.Since = t
	}
	switch d := r.URL.Query().Get("decision"); d {
	case "", audit.StatusAllowed, audit.StatusDenied, audit.StatusError, audit.StatusInterrupted, audit.StatusAsked, audit.StatusObserved:
		f.Decision = d
	default:
		return f, errorf(http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("decision %q: want allowed, denied, error, interrupted, asked or observed", d))
	}
	return f, nil
}

// events replays every decision since ?since= across all sessions, oldest
// first (then by call id). It reads every branch's tools.org in full: the
// cost is linear in the size of the audit, a few milliseconds per thousand
// entries; `scopegate gc` bounds it.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	f, err := parseFilter(r)
	if err != nil {
		return err
	}
	branches, err := listBranches(s.opts.SessionsDir)
	if err != nil {
		return err
	}
	f.Warn = func(err error) { s.log.Warn("skipped an unreadable tools.org entry", "err", err) }
	events := []Event{}
	for _, b := range branches {
		if err := r.Context().Err(); err != nil {
			return err
		}
		entries, err := audit.ReadFile(filepath.Join(b.dir, audit.LogFile), f)
		if err != nil {
			return fmt.Errorf("read audit of %s/%s: %w", b.session, b.branch, err)
		}
		for _, e := range entries {
			events = append(events, Event{SessionID: b.session, Branch: b.branch, Entry: e})
		}
	}
	slices.SortStableFunc(events, func(a, b Event) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.CallID, b.CallID)
	})
	writeJSON(w, http.StatusOK, events)
	return nil
}

// audit answers the entries of one branch.
func (s *Server) audit(w http.ResponseWriter, r *http.Request) error {
	f, err := parseFilter(r)
	if err != nil {
		return err
	}
	branch := r.URL.Query().Get("branch")
	e, err := s.reg.lookup(r.Context(), r.PathValue("id"), branch)
	if err != nil {
		return err
	}
	f.Warn = func(err error) { s.log.Warn("skipped an unreadable tools.org entry", "err", err) }
	entries, err := audit.ReadFile(filepath.Join(e.dir, audit.LogFile), f)
	if err != nil {
		return fmt.Errorf("read audit of %s/%s: %w", e.session, e.branch, err)
	}
	if entries == nil {
		entries = []audit.Entry{}
	}
	writeJSON(w, http.StatusOK, entries)
	return nil
}

// MarshalJSON encodes the event as its entry's JSON with the session and
// branch added (the entry's own MarshalJSON would otherwise drop them).
func (ev Event) MarshalJSON() ([]byte, error) {
	entry, err := json.Marshal(ev.Entry)
	if err != nil {
		return nil, err
	}
	head, err := json.Marshal(struct {
		SessionID string `json:"session_id"`
		Branch    string `json:"branch"`
	}{ev.SessionID, ev.Branch})
	if err != nil {
		return nil, err
	}
	out := append(head[:len(head)-1:len(head)-1], ',')
	return append(out, entry[1:]...), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (ev *Event) UnmarshalJSON(data []byte) error {
	var ref struct {
		SessionID string `json:"session_id"`
		Branch    string `json:"branch"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		return err
	}
	if err := json.Unmarshal(data, &ev.Entry); err != nil {
		return err
	}
	ev.SessionID, ev.Branch = ref.SessionID, ref.Branch
	return nil
}
