package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// claudeTerminal is the real Claude Code run interactively in a
// pseudo-terminal, as a user runs it: what the terminal shows is read back
// as text, and keys are typed into it.
type claudeTerminal struct {
	t   *testing.T
	ptm *os.File
	cmd *exec.Cmd

	mu     sync.Mutex
	screen *vtScreen
	frame  int    // reads drawn on screen
	base   string // the screen, squeezed, at the last key or match
	baseAt int    // its frame
	done   chan struct{}
}

// claudeHome prepares a Claude Code configuration directory in which an
// interactive session starts without its first-run dialogs: onboarding
// done, the test's API key approved, the project trusted.
func claudeHome(t *testing.T, configDir, proj, apiKey string) {
	t.Helper()
	state := map[string]any{
		"hasCompletedOnboarding": true, "theme": "dark",
		"customApiKeyResponses": map[string]any{"approved": []string{apiKey[len(apiKey)-20:]}, "rejected": []string{}},
		"projects":              map[string]any{proj: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
	}
	data, _ := json.Marshal(state)
	if err := os.MkdirAll(configDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(configDir, ".claude.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// startClaudeTerminal starts cmd on a new pseudo-terminal of 50 rows and
// 160 columns, as its controlling terminal.
func startClaudeTerminal(t *testing.T, cmd *exec.Cmd) *claudeTerminal {
	t.Helper()
	ptm, pts := openPTY(t)
	if err := unix.IoctlSetWinsize(int(ptm.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 50, Col: 160}); err != nil {
		t.Fatalf("set the terminal's size: %v", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	pts.Close()
	c := &claudeTerminal{t: t, ptm: ptm, cmd: cmd, screen: newVTScreen(50, 160), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		buf := make([]byte, 64<<10)
		for {
			n, err := ptm.Read(buf)
			if n > 0 {
				c.mu.Lock()
				c.screen.feed(buf[:n])
				c.frame++
				c.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		ptm.Close()
		<-c.done
		if t.Failed() {
			text, _ := c.shown()
			t.Logf("the terminal showed:\n%s", text)
		}
	})
	return c
}

// shown is the text on the screen and the frame it was drawn in.
func (c *claudeTerminal) shown() (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.screen.text(), c.frame
}

// expect waits until the screen shows text (compared without spaces and
// box-drawing characters, which the terminal's layout moves around), drawn
// after the last key or expect, and returns the screen's text.
func (c *claudeTerminal) expect(text string, timeout time.Duration) string {
	c.t.Helper()
	shown, ok := c.await(text, timeout)
	if !ok {
		c.t.Fatalf("the terminal did not show %q within %s", text, timeout)
	}
	return shown
}

// await is expect that reports a timeout instead of failing.
func (c *claudeTerminal) await(text string, timeout time.Duration) (string, bool) {
	c.t.Helper()
	want := squeeze(text)
	deadline := time.Now().Add(timeout)
	for {
		shown, frame := c.shown()
		now := squeeze(shown)
		c.mu.Lock()
		ok := frame > c.baseAt && freshMatch(now, c.base, want)
		if ok {
			c.base, c.baseAt = now, frame
		}
		c.mu.Unlock()
		if ok {
			return shown, true
		}
		if time.Now().After(deadline) {
			return shown, false
		}
		select {
		case <-c.done:
			c.t.Fatalf("Claude Code ended before it showed %q", text)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// freshWindow is how much of the screen before a match tells one dialog
// from another under the same title: a dialog's body comes above its
// title, and what changes while it stands (a spinner, the status line)
// comes below it.
const freshWindow = 300

// freshMatch reports whether the squeezed screen now shows want anew,
// compared with the squeezed screen before: the last want on it is not
// the one before, standing after the same text.
func freshMatch(now, before, want string) bool {
	i := strings.LastIndex(now, want)
	if i < 0 {
		return false
	}
	j := strings.LastIndex(before, want)
	return j < 0 || now[max(i-freshWindow, 0):i] != before[max(j-freshWindow, 0):j]
}

// choose answers the dialog on the screen with key and waits for then, on
// a screen drawn after the key that no longer shows the answered dialog
// there.
// Claude Code does not take a key typed in the moment its dialog appears,
// so the key is typed once the dialog has stood a while.
func (c *claudeTerminal) choose(key, then string, timeout time.Duration) string {
	c.t.Helper()
	time.Sleep(1500 * time.Millisecond)
	c.typeKeys(key)
	return c.expect(then, timeout)
}

// typeKeys types into the terminal; what the screen shows now is not
// what expect waits for.
func (c *claudeTerminal) typeKeys(keys string) {
	c.t.Helper()
	shown, frame := c.shown()
	c.mu.Lock()
	c.base, c.baseAt = squeeze(shown), frame
	c.mu.Unlock()
	if _, err := c.ptm.WriteString(keys); err != nil {
		c.t.Fatalf("type %q: %v", keys, err)
	}
}

var boxDrawingRE = regexp.MustCompile(`[\s\x{2500}-\x{257F}\x{2580}-\x{259F}]+`)

// squeeze drops white space and box-drawing characters.
func squeeze(s string) string { return boxDrawingRE.ReplaceAllString(s, "") }
