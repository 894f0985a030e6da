package audit

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procIdentity is what tells a process apart from a later one that got the
// same pid: its start time in clock ticks since boot (/proc/<pid>/stat field
// 22) and its process group.
type procIdentity struct {
	start uint64
	pgrp  int
}

// errNoProcess reports that a pid names no process.
var errNoProcess = errors.New("no such process")

// readProc reads the identity of pid from /proc.
func readProc(pid int) (procIdentity, error) {
	if pid <= 0 {
		return procIdentity{}, errNoProcess
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return procIdentity{}, errNoProcess
	}
	if err != nil {
		return procIdentity{}, fmt.Errorf("read process %d: %w", pid, err)
	}
	return parseStat(string(data))
}

// parseStat parses /proc/<pid>/stat. The command name (field 2) is in
// parentheses and may itself contain spaces and parentheses, so fields are
// counted from the last ')'.
func parseStat(s string) (procIdentity, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procIdentity{}, fmt.Errorf("parse /proc stat: no command name")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 20 {
		return procIdentity{}, fmt.Errorf("parse /proc stat: %d fields", len(f)+2)
	}
	if f[0] == "Z" || f[0] == "X" {
		// A zombie has finished: it is gone for our purposes.
		return procIdentity{}, errNoProcess
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return procIdentity{}, fmt.Errorf("parse /proc stat start time: %w", err)
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return procIdentity{}, fmt.Errorf("parse /proc stat process group: %w", err)
	}
	return procIdentity{start: start, pgrp: pgrp}, nil
}

// alive reports whether pid still names the process that started at start.
// Errors other than "no such process" count as alive: never kill or recover
// what cannot be checked.
func alive(pid int, start uint64) bool {
	id, err := readProc(pid)
	if errors.Is(err, errNoProcess) {
		if _, serr := os.Stat("/proc/self/stat"); serr != nil {
			// No /proc (not Linux): fall back to "does the pid exist".
			return pid > 0 && syscall.Kill(pid, 0) == nil
		}
		return false
	}
	if err != nil {
		return true
	}
	return start == 0 || id.start == start
}
