package audit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/scopegate/scopegate/internal/atomicfile"
)

// InflightDir is the journal directory of a branch directory.
func InflightDir(branchDir string) string { return filepath.Join(branchDir, ".inflight") }

// Record is the in-flight record of one call: written before the call runs,
// removed once its tools.org entry is written. A record left behind by a
// process that is gone becomes an INTERRUPTED entry.
type Record struct {
	CallID string `json:"call_id"`
	// PID and PIDStart identify the scopegate process that owns the call;
	// PIDStart (clock ticks since boot, /proc/<pid>/stat) tells it apart from
	// a later process that reuses the pid. Begin fills both when zero.
	PID      int       `json:"pid"`
	PIDStart uint64    `json:"pid_start"`
	Started  time.Time `json:"started"`
	// The call and how it was decided, for the INTERRUPTED entry.
	Tool        string          `json:"tool"`
	Args        json.RawMessage `json:"args,omitempty"`
	Cwd         string          `json:"cwd,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	Rule        string          `json:"rule,omitempty"`
	Confinement string          `json:"confinement,omitempty"`
	// ChildPID and ChildStart identify the process the call spawned, if any;
	// it is killed (with its process group) when the call is recovered.
	ChildPID   int    `json:"child_pid,omitempty"`
	ChildStart uint64 `json:"child_start,omitempty"`
}

// Journal keeps the in-flight records of one branch, one small JSON file per
// call, each written atomically.
type Journal struct {
	// Dir holds the records (see InflightDir); created 0700 when missing.
	Dir string
	// Now stamps records and recovered entries (default time.Now).
	Now func() time.Time
}

// staleTemp is the age after which a half-written record's temp file is a
// leftover of a writer that died (writing one takes microseconds).
const staleTemp = 10 * time.Minute

// recordExt ends a record's file name; a claimed record's name has
// claimMark, the claimer's pid and start time after it.
const (
	recordExt = ".json"
	claimMark = ".claim."
)

// Begin writes the in-flight record of a call about to run.
func (j *Journal) Begin(ctx context.Context, rec Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !validCallID(rec.CallID) {
		return fmt.Errorf("journal call %q: invalid call id", rec.CallID)
	}
	if rec.PID == 0 {
		rec.PID = os.Getpid()
		if id, err := readProc(rec.PID); err == nil {
			rec.PIDStart = id.start
		}
	}
	if rec.Started.IsZero() {
		rec.Started = now(j.Now)
	}
	if err := os.MkdirAll(j.Dir, 0o700); err != nil {
		return fmt.Errorf("journal call %q: %w", rec.CallID, err)
	}
	if err := j.write(rec); err != nil {
		return fmt.Errorf("journal call %q: %w", rec.CallID, err)
	}
	return nil
}

// SetChild records the process a call spawned, so that recovery can kill it
// if the owner dies first.
func (j *Journal) SetChild(callID string, pid int) error {
	rec, err := j.read(j.path(callID))
	if err != nil {
		return fmt.Errorf("journal child of call %q: %w", callID, err)
	}
	id, err := readProc(pid)
	if err != nil {
		return fmt.Errorf("journal child of call %q: %w", callID, err)
	}
	rec.ChildPID, rec.ChildStart = pid, id.start
	if err := j.write(rec); err != nil {
		return fmt.Errorf("journal child of call %q: %w", callID, err)
	}
	return nil
}

// End removes the record of a call whose tools.org entry is written.
func (j *Journal) End(callID string) error {
	if !validCallID(callID) {
		return fmt.Errorf("end call %q: invalid call id", callID)
	}
	if err := os.Remove(j.path(callID)); err != nil {
		return fmt.Errorf("end call %q: %w", callID, err)
	}
	return nil
}

// Recover turns every record whose owner process is gone into an
// INTERRUPTED entry in log, killing first the call's child process group
// when the child is still the process that was recorded. Records of a live
// owner are left alone. It returns how many records it recovered.
//
// Several processes may recover the same journal at once: each record is
// claimed by renaming it before anything else, so exactly one of them writes
// its entry. A claim whose claimer died is taken over by the next Recover.
func (j *Journal) Recover(ctx context.Context, log *Log) (int, error) {
	names, err := os.ReadDir(j.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("recover journal: %w", err)
	}
	sort.Slice(names, func(a, b int) bool { return names[a].Name() < names[b].Name() })
	self := os.Getpid()
	var selfStart uint64
	if id, err := readProc(self); err == nil {
		selfStart = id.start
	}
	mine := claimMark + strconv.Itoa(self) + "." + strconv.FormatUint(selfStart, 10) + "."
	written := &writtenSet{path: log.Path}
	for _, d := range names {
		if id, _, _ := strings.Cut(strings.TrimSuffix(d.Name(), recordExt), claimMark); validCallID(id) {
			written.want(id)
		}
	}
	n := 0
	var errs []error
	for _, d := range names {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		name := d.Name()
		if atomicfile.IsTemp(name) {
			// A record being written when its writer died: the call never
			// started. Old enough, it can only be such a leftover.
			if fi, err := d.Info(); err == nil && now(j.Now).Sub(fi.ModTime()) > staleTemp {
				os.Remove(filepath.Join(j.Dir, name))
			}
			continue
		}
		if !strings.HasSuffix(name, recordExt) && !strings.Contains(name, claimMark) {
			continue
		}
		ok, err := j.recoverOne(ctx, log, written, name, mine)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			n++
		}
	}
	if err := errors.Join(errs...); err != nil {
		return n, fmt.Errorf("recover journal: %w", err)
	}
	return n, nil
}

// recoverOne recovers one journal file if its owner (or, for a claimed
// file, its claimer) is gone.
func (j *Journal) recoverOne(ctx context.Context, log *Log, written *writtenSet, name, mine string) (bool, error) {
	path := filepath.Join(j.Dir, name)
	if base, claim, ok := strings.Cut(name, claimMark); ok {
		// A claim left by a recoverer: take it over only if that one died.
		f := strings.Split(claim, ".")
		if len(f) < 2 {
			return false, nil
		}
		pid, _ := strconv.Atoi(f[0])
		start, _ := strconv.ParseUint(f[1], 10, 64)
		if alive(pid, start) {
			return false, nil
		}
		name = base
	} else {
		rec, err := j.read(path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil // ended or claimed meanwhile
		}
		if err != nil {
			return false, err
		}
		if alive(rec.PID, rec.PIDStart) {
			return false, nil
		}
	}
	claimed := filepath.Join(j.Dir, name+mine+randomHex())
	if err := os.Rename(path, claimed); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil // someone else claimed it
		}
		return false, fmt.Errorf("claim %s: %w", name, err)
	}
	rec, err := j.read(claimed)
	if err != nil {
		return false, err
	}
	// The owner may have died between writing the call's entry and
	// removing its record: the call finished and is in tools.org already.
	switch done, err := written.has(rec.CallID); {
	case err != nil:
		return false, err
	case done:
		if err := os.Remove(claimed); err != nil {
			return false, fmt.Errorf("remove finished record %s: %w", name, err)
		}
		return false, nil
	}
	msg := fmt.Sprintf("scopegate process %d ended before the call finished", rec.PID)
	if rec.ChildPID > 0 && alive(rec.ChildPID, rec.ChildStart) && rec.ChildStart != 0 {
		if err := killTree(rec.ChildPID); err != nil {
			return false, fmt.Errorf("call %q: kill child %d: %w", rec.CallID, rec.ChildPID, err)
		}
		msg += fmt.Sprintf("; its child process %d was killed", rec.ChildPID)
	}
	e := Entry{
		CallID:      rec.CallID,
		Time:        rec.Started,
		Tool:        rec.Tool,
		Decision:    DecisionInterrupted,
		Reason:      rec.Reason,
		Rule:        rec.Rule,
		Message:     msg,
		Cwd:         rec.Cwd,
		Args:        rec.Args,
		Confinement: rec.Confinement,
	}
	if e.Time.IsZero() {
		e.Time = now(j.Now)
	}
	if err := log.Append(ctx, e); err != nil {
		return false, err
	}
	if err := os.Remove(claimed); err != nil {
		return true, fmt.Errorf("remove recovered record %s: %w", name, err)
	}
	return true, nil
}

// writtenSet tells which of the wanted call ids have an entry in a
// tools.org file, reading the file once, on the first question.
type writtenSet struct {
	path    string
	wanted  map[string]bool
	scanned bool
	found   map[string]bool
}

func (w *writtenSet) want(id string) {
	if w.wanted == nil {
		w.wanted = map[string]bool{}
	}
	w.wanted[id] = true
}

// has reports whether the log holds an entry of call id. An entry's call
// id is the first property of its drawer: the headline, ":PROPERTIES:",
// then ":CALL_ID: id". A line of a block never starts with "*" (it is
// escaped with a comma), so text inside an entry cannot forge that.
func (w *writtenSet) has(id string) (bool, error) {
	if !w.scanned {
		w.scanned = true
		w.found = map[string]bool{}
		f, err := os.Open(w.path)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read %s: %w", w.path, err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		// state 1: the line was a headline; 2: ":PROPERTIES:" after one.
		state := 0
		for sc.Scan() {
			line := sc.Bytes()
			switch {
			case state == 2:
				if v, ok := bytes.CutPrefix(line, []byte(":CALL_ID:")); ok {
					if v = bytes.TrimLeft(v, " "); w.wanted[string(v)] {
						w.found[string(v)] = true
					}
				}
				state = 0
			case state == 1 && string(line) == ":PROPERTIES:":
				state = 2
			default:
				state = 0
			}
			if bytes.HasPrefix(line, []byte("* ")) {
				state = 1
			}
		}
		if err := sc.Err(); err != nil {
			return false, fmt.Errorf("read %s: %w", w.path, err)
		}
	}
	return w.found[id], nil
}

// killTree kills pid's process group when pid leads one, else pid alone.
func killTree(pid int) error {
	id, err := readProc(pid)
	if errors.Is(err, errNoProcess) {
		return nil
	}
	if err == nil && id.pgrp == pid {
		if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
		return nil
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

func (j *Journal) path(callID string) string {
	return filepath.Join(j.Dir, callID+recordExt)
}

func (j *Journal) read(path string) (Record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Record{}, err
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return Record{}, fmt.Errorf("parse %s: %w", filepath.Base(path), err)
	}
	return rec, nil
}

// write replaces the record file (atomicfile), its data forced to the
// disk before its name (Sync): not Durable, which would put a second fsync
// on the path of every call that writes.
func (j *Journal) write(rec Record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return atomicfile.Write(j.path(rec.CallID), data, atomicfile.Options{Sync: true})
}

// validCallID keeps call ids usable as file names.
func validCallID(id string) bool {
	if id == "" || len(id) > 128 || strings.Contains(id, claimMark) {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func randomHex() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
