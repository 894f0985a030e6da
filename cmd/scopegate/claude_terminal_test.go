package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// claudeTerminal is the real Claude Code run interactively in a
// pseudo-terminal, as a user runs it: what it draws is read back as text,
// and keys are typed into it.
type claudeTerminal struct {
	t   *testing.T
	ptm *os.File
	cmd *exec.Cmd

	mu     sync.Mutex
	screen []byte // everything drawn, escape sequences included
	seen   int    // how much of screen expect has consumed
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
	c := &claudeTerminal{t: t, ptm: ptm, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		buf := make([]byte, 64<<10)
		for {
			n, err := ptm.Read(buf)
			if n > 0 {
				c.mu.Lock()
				c.screen = append(c.screen, buf[:n]...)
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
			t.Logf("the terminal showed, last 6000 characters:\n%s", lastRunes(plainText(c.all()), 6000))
		}
	})
	return c
}

func (c *claudeTerminal) all() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.screen...)
}

// expect waits until the terminal draws text (compared without spaces and
// box-drawing characters, which the terminal's layout moves around) and
// returns what it drew since the previous expect, as plain text.
func (c *claudeTerminal) expect(text string, timeout time.Duration) string {
	c.t.Helper()
	fresh, ok := c.await(text, timeout)
	if !ok {
		c.t.Fatalf("the terminal did not show %q within %s", text, timeout)
	}
	return fresh
}

// await is expect that reports a timeout instead of failing.
func (c *claudeTerminal) await(text string, timeout time.Duration) (string, bool) {
	c.t.Helper()
	want := squeeze(text)
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		fresh := plainText(c.screen[c.seen:])
		n := len(c.screen)
		c.mu.Unlock()
		if i := strings.Index(squeeze(fresh), want); i >= 0 {
			c.mu.Lock()
			c.seen = n
			c.mu.Unlock()
			return fresh, true
		}
		if time.Now().After(deadline) {
			return fresh, false
		}
		select {
		case <-c.done:
			c.t.Fatalf("Claude Code ended before it showed %q", text)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// choose answers the dialog on the screen with key and waits for then.
// Claude Code does not take a key typed in the moment its dialog appears,
// so the key is typed once the dialog has stood a while.
func (c *claudeTerminal) choose(key, then string, timeout time.Duration) string {
	c.t.Helper()
	time.Sleep(1500 * time.Millisecond)
	c.typeKeys(key)
	return c.expect(then, timeout)
}

// typeKeys types into the terminal.
func (c *claudeTerminal) typeKeys(keys string) {
	c.t.Helper()
	if _, err := c.ptm.WriteString(keys); err != nil {
		c.t.Fatalf("type %q: %v", keys, err)
	}
}

var (
	csiRE        = regexp.MustCompile(`\x1b\[[0-9;?<>=]*[ -/]*[@-~]`)
	oscRE        = regexp.MustCompile(`\x1b\][^\x07\x1b]*(\x07|\x1b\\)`)
	otherEscRE   = regexp.MustCompile(`\x1b[()][A-Za-z0-9]|\x1b[=>78DEHMNOZc]`)
	cursorFwdRE  = regexp.MustCompile(`\x1b\[([0-9]*)C`)
	boxDrawingRE = regexp.MustCompile(`[\s\x{2500}-\x{257F}\x{2580}-\x{259F}]+`)
)

// plainText is what the terminal drew, without escape sequences; a cursor
// moved forward is drawn as spaces.
func plainText(b []byte) string {
	s := cursorFwdRE.ReplaceAllStringFunc(string(b), func(m string) string {
		n, err := strconv.Atoi(cursorFwdRE.FindStringSubmatch(m)[1])
		if err != nil || n < 1 {
			n = 1
		}
		return strings.Repeat(" ", min(n, 200))
	})
	s = oscRE.ReplaceAllString(s, "")
	s = csiRE.ReplaceAllString(s, "")
	return otherEscRE.ReplaceAllString(s, "")
}

// squeeze drops white space and box-drawing characters.
func squeeze(s string) string { return boxDrawingRE.ReplaceAllString(s, "") }

func lastRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		r = r[len(r)-n:]
	}
	return string(r)
}
