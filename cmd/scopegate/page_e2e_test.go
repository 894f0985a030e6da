package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color/palette"
	"image/draw"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/scopegate/scopegate/audit"
	"github.com/scopegate/scopegate/internal/npmclient"
	"github.com/scopegate/scopegate/policy"
)

var pageScreenshot = flag.String("page-screenshot", "", "write a screenshot of the live page to this PNG file (docs/page.png)")

// reboundHost is a name the test's Chromium resolves to 127.0.0.1, as a
// site an attacker controls would after rebinding its DNS to this machine.
const reboundHost = "rebound.test"

// startChromium starts the one headless Chromium of TestPage, shared by its
// subtests (each in a tab of its own): Debian's chromium, with the flags
// that keep it off the network.
func startChromium(t *testing.T) context.Context {
	t.Helper()
	exe := requireProgram(t, "chromium")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("host-resolver-rules", "MAP "+reboundHost+" 127.0.0.1"))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// pageTab is one tab of the browser, with the dialogs it opened counted
// (and dismissed).
type pageTab struct {
	t       *testing.T
	ctx     context.Context
	dialogs atomic.Int32
}

// openTab opens a tab on url and waits for the page to be live.
func openTab(t *testing.T, bctx context.Context, url string) *pageTab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	ctx, tcancel := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(tcancel)
	p := &pageTab{t: t, ctx: ctx}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatal(err)
	}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			p.dialogs.Add(1)
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFor waits until the expression is true in the page (a generous
// deadline: the VM is slow and shared).
func (p *pageTab) waitFor(what, expr string) {
	p.t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(50*time.Millisecond),
		chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		p.t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// eval is the value of a JavaScript expression in the page.
func eval[T any](p *pageTab, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// shown reports whether the element id is displayed.
func shown(p *pageTab, id string) bool {
	p.t.Helper()
	return eval[bool](p, `getComputedStyle(document.getElementById(`+jsString(id)+`)).display !== "none"`)
}

// smallPNG is a screenshot in 216 colors, small enough to commit: the
// page's flat colors and text survive without dithering.
func smallPNG(t *testing.T, data []byte) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p := image.NewPaletted(img.Bounds(), palette.WebSafe)
	draw.Draw(p, img.Bounds(), img, image.Point{}, draw.Src)
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, p); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// offerCard waits for the offer whose call line contains text and
// returns its id.
func (p *pageTab) offerCard(text string) string {
	p.t.Helper()
	expr := `[...document.querySelectorAll("#offer-list .offer")].some(c => c.querySelector(".what").textContent.includes(` + jsString(text) + `))`
	p.waitFor("an offer of "+text, expr)
	return eval[string](p, `[...document.querySelectorAll("#offer-list .offer")].find(c => c.querySelector(".what").textContent.includes(`+jsString(text)+`)).dataset.id`)
}

// answer clicks an answer of the offer id and waits for the card to go.
func (p *pageTab) answer(id, answer string) {
	p.t.Helper()
	sel := `#offer-list .offer[data-id="` + id + `"]`
	if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(sel+` button.`+answer))); err != nil {
		p.t.Fatalf("click %s: %v", answer, err)
	}
	p.waitFor("the offer to go", `!document.querySelector(`+jsString(sel)+`)`)
}

// feedRow waits for the feed's row of the call whose line is text and
// returns its cells' text.
func (p *pageTab) feedRow(text string) []string {
	p.t.Helper()
	find := `[...document.querySelectorAll("#feed-body tr")].find(tr => tr.children[4].textContent === ` + jsString(text) + `)`
	p.waitFor("the feed's row of "+text, `!!`+find)
	return eval[[]string](p, `[...`+find+`.children].map(td => td.textContent)`)
}

// setConfig writes the workspace's config.yml.
func (w *workspace) setConfig(text string) {
	w.t.Helper()
	if err := os.MkdirAll(w.cfg, 0o700); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.cfg, "config.yml"), []byte(text), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// bgCall runs `scopegate call` (forwarded to the serve) in the background
// and returns its exit code and output when it ends.
func (w *workspace) bgCall(tool string, args map[string]any) <-chan string {
	call, _ := json.Marshal(map[string]any{"tool": tool, "args": args, "cwd": w.proj})
	cmd := w.cmd("call", "--session", w.id, string(call))
	out := make(chan string, 1)
	go func() {
		data, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		out <- fmt.Sprintf("exit %d: %s", code, data)
	}()
	return out
}

// TestPage drives the live page of a real serve in Debian's Chromium: the
// feed, offers answered on the page for the real Codex under its hook and
// for forwarded calls, the timeout, text that looks like HTML, refused
// cross-origin and rebound requests, 1,000 rows, and the token.
func TestPage(t *testing.T) {
	bctx := startChromium(t)
	w := newWorkspace(t)
	w.setConfig("approval_timeout_seconds: 60\n")
	s := startServe(t, w)
	p := openTab(t, bctx, s.url+"/")
	p.waitFor("the page to be live", `document.getElementById("status").textContent === "live"`)

	t.Run("loads", func(t *testing.T) {
		p.t = t
		p.waitFor("the session", `document.getElementById("sessions-body").textContent.includes(`+jsString(w.id+"/main")+`)`)
		if got := eval[string](p, `document.getElementById("sessions-body").textContent`); !strings.Contains(got, w.proj) ||
			!strings.Contains(got, "enforce") {
			t.Errorf("sessions: %q, want the branch's mode and write root", got)
		}
		p.waitFor("the chain's verification", `document.getElementById("sessions-body").textContent.includes("holds")`)
		if shown(p, "login") || !shown(p, "main") {
			t.Error("the token form shows on a serve without a token")
		}
	})

	t.Run("a denied call appears in the feed", func(t *testing.T) {
		p.t = t
		w.run(3, "check", "--session", w.id, `{"tool":"shell","args":{"command":"curl http://example.invalid/feed"}}`)
		cells := p.feedRow("curl http://example.invalid/feed")
		if cells[1] != w.id+"/main" || cells[2] != "cli" || cells[5] != "denied" || cells[6] != "command_not_allowed" {
			t.Errorf("row %q", cells)
		}
	})

	t.Run("text that looks like HTML stays text", func(t *testing.T) {
		p.t = t
		const html = `<img src=x onerror=alert(1)>`
		call, _ := json.Marshal(map[string]any{"tool": "shell", "args": map[string]any{"command": html}})
		w.run(3, "check", "--session", w.id, string(call))
		if cells := p.feedRow(html); cells[5] != "denied" {
			t.Errorf("row %q", cells)
		}
		// A path of that name outside the scope: offered, its card shows
		// it as text.
		dir := filepath.Join(w.root, "outside")
		os.MkdirAll(dir, 0o755)
		path := filepath.Join(dir, html)
		os.WriteFile(path, []byte("x\n"), 0o644)
		done := w.bgCall("read_file", map[string]any{"path": path})
		id := p.offerCard(html)
		if got := eval[string](p, `document.querySelector('#offer-list .offer[data-id="`+id+`"] .what').textContent`); got != "read_file: "+path {
			t.Errorf("the offer shows %q", got)
		}
		p.answer(id, "deny")
		if out := <-done; !strings.HasPrefix(out, "exit 3") {
			t.Errorf("denied call: %s", out)
		}
		if n := eval[int](p, `document.querySelectorAll("#feed-body img, #offer-list img").length`); n != 0 || p.dialogs.Load() != 0 {
			t.Errorf("%d img elements and %d dialogs: the text was taken as HTML", n, p.dialogs.Load())
		}
	})

	t.Run("Codex's calls answered on the page", func(t *testing.T) {
		p.t = t
		pageCodex(t, p, w)
	})

	t.Run("no answer in time", func(t *testing.T) {
		p.t = t
		// config.yml is read for every call: no restart.
		w.setConfig("approval_timeout_seconds: 2\n")
		defer w.setConfig("approval_timeout_seconds: 60\n")
		path := filepath.Join(w.root, "late.txt")
		os.WriteFile(path, []byte("late\n"), 0o644)
		done := w.bgCall("read_file", map[string]any{"path": path})
		id := p.offerCard(path)
		p.waitFor("the offer to time out", `!document.querySelector('#offer-list .offer[data-id="`+id+`"]')`)
		if out := <-done; !strings.HasPrefix(out, "exit 3") {
			t.Fatalf("call: %s", out)
		}
		es := w.entries()
		if last := es[len(es)-1]; last.Answer != "timeout" || last.Channel != "page" || last.Decision != audit.DecisionDenied {
			t.Errorf("entry %+v", last)
		}
	})

	t.Run("cross-origin answers and rebound names are refused", func(t *testing.T) {
		p.t = t
		path := filepath.Join(w.root, "guarded.txt")
		os.WriteFile(path, []byte("guarded\n"), 0o644)
		done := w.bgCall("read_file", map[string]any{"path": path})
		id := p.offerCard(path)
		// A page of another origin (loopback, another port) posts an answer
		// the only way it can: without the CSRF token, which it cannot read.
		posted := make(chan struct{})
		attacker := serveLoopback(t, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/done" {
				close(posted)
				return
			}
			rw.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(rw, `<script>
fetch(%q, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: '{"answer":"once"}'})
  .finally(() => fetch("/done"));
</script>`, s.url+"/v1/page/offers/"+id)
		}))
		a := openTab(t, bctx, strings.Replace(attacker, "127.0.0.1", "localhost", 1)+"/")
		select {
		case <-posted:
		case <-time.After(30 * time.Second):
			t.Fatal("the other origin's page did not post")
		}
		_ = a
		if !eval[bool](p, `!!document.querySelector('#offer-list .offer[data-id="`+id+`"]')`) {
			t.Fatal("the other origin's answer counted")
		}
		if !strings.Contains(s.stderr.String(), `"path":"/v1/page/offers/`+id+`","status":403`) {
			t.Errorf("no 403 for the other origin's post in serve's log:\n%s", s.stderr)
		}
		// The page of a name rebound to this machine gets nothing.
		u, _ := url.Parse(s.url)
		r := openTab(t, bctx, "http://"+reboundHost+":"+u.Port()+"/")
		r.waitFor("the refusal", `document.body && document.body.textContent.includes("forbidden_host")`)
		if eval[bool](r, `!!document.getElementById("main")`) {
			t.Error("the rebound name got the page")
		}
		p.answer(id, "deny")
		if out := <-done; !strings.HasPrefix(out, "exit 3") {
			t.Errorf("call: %s", out)
		}
	})

	t.Run("MCP clients", func(t *testing.T) {
		p.t = t
		path := filepath.Join(w.root, "mcp.txt")
		os.WriteFile(path, []byte("mcp-content\n"), 0o644)
		// A client that asks its user too (elicitation), whose user is slow:
		// the page answers first; the client's form is cancelled.
		got := make(chan []elicitOut, 1)
		go func() {
			got <- runElicit(t, w, []string{"http", s.url + "/v1/sessions/" + w.id + "/mcp"},
				[]elicitStep{{Tool: "read_file", Arguments: map[string]any{"path": path}, Answer: "late"}})
		}()
		id := p.offerCard(path)
		if ch := eval[string](p, `document.querySelector('#offer-list .offer[data-id="`+id+`"] .meta').textContent`); !strings.Contains(ch, "asked through page and mcp:elicitation") {
			t.Errorf("offer %q, want both channels named", ch)
		}
		p.answer(id, "once")
		out := <-got
		if out[0].IsError || !strings.Contains(out[0].Text, "mcp-content") || len(out[0].Offers) != 1 {
			t.Fatalf("the MCP client's call: %+v", out[0])
		}
		es := w.entries()
		if last := es[len(es)-1]; last.Mode != audit.ModeMCP || last.Channel != "page" || last.Approved != "once" {
			t.Errorf("entry %+v, want the page's answer", last)
		}
		// A client that cannot ask (the inspector CLI): the page asks.
		res := make(chan map[string]any, 1)
		go func() {
			res <- inspector(t, w, []string{s.url + "/v1/sessions/" + w.id + "/mcp", "--transport", "http"},
				"--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "path="+path)
		}()
		p.answer(p.offerCard(path), "deny")
		if r := <-res; r["isError"] != true || strings.Contains(mcpText(r), "mcp-content") {
			t.Errorf("inspector: %v, want a denial", r)
		}
		es = w.entries()
		if last := es[len(es)-1]; last.Channel != "page" || last.Answer != "deny" || last.Decision != audit.DecisionDenied {
			t.Errorf("entry %+v", last)
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		p.t = t
		path := filepath.Join(w.root, "notes", "todo.txt")
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte("todo\n"), 0o644)
		done := w.bgCall("read_file", map[string]any{"path": path})
		id := p.offerCard(path)
		p.waitFor("the chain's verification of Codex's session", `[...document.querySelectorAll("#sessions-body td[data-branch]")].every(td => td.textContent.startsWith("holds"))`)
		if *pageScreenshot != "" {
			if err := chromedp.Do(p.ctx, chromedp.EmulateViewport(1280, 1150)); err != nil {
				t.Fatal(err)
			}
			png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(*pageScreenshot, smallPNG(t, png), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p.answer(id, "deny")
		<-done
	})

	t.Run("the feed keeps 1,000 rows", func(t *testing.T) {
		p.t = t
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 275 {
					body := fmt.Sprintf(`{"tool":"shell","args":{"command":"uname -%d-%d"}}`, i, j)
					resp, err := http.Post(s.url+"/v1/sessions/"+w.id+"/check", "application/json", strings.NewReader(body))
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
		for i := range 4 {
			p.feedRow(fmt.Sprintf("uname -%d-274", i))
		}
		p.waitFor("1,000 rows", `document.querySelectorAll("#feed-body tr").length === 1000`)
		if n := eval[int](p, `document.querySelectorAll("#feed-body tr").length`); n != 1000 {
			t.Errorf("%d rows, want 1000", n)
		}
		// The filters narrow the same rows.
		if err := chromedp.Do(p.ctx, chromedp.SetValue(chromedp.ID("f-decision"), "allowed"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById("f-decision").dispatchEvent(new Event("change"))`)); err != nil {
			t.Fatal(err)
		}
		if n := eval[int](p, `document.querySelectorAll("#feed-body tr").length`); n != 0 {
			t.Errorf("%d allowed rows among denials", n)
		}
	})

	t.Run("with a token, nothing shows without it", func(t *testing.T) {
		tw := newWorkspace(t)
		tokenFile := filepath.Join(tw.root, "token")
		os.WriteFile(tokenFile, []byte("page-token-42\n"), 0o600)
		ts := startServe(t, tw, "--token-file", tokenFile)
		tp := openTab(t, bctx, ts.url+"/")
		tp.waitFor("the token form", `getComputedStyle(document.getElementById("login")).display !== "none"`)
		if shown(tp, "main") || eval[string](tp, `document.getElementById("sessions-body").textContent`) != "" {
			t.Fatal("the page shows without the token")
		}
		if err := chromedp.Do(tp.ctx, chromedp.SendKeys(chromedp.ID("token"), "wrong\n")); err != nil {
			t.Fatal(err)
		}
		tp.waitFor("the refusal", `document.getElementById("token-error").textContent.includes("refused")`)
		if shown(tp, "main") {
			t.Fatal("the page shows with a wrong token")
		}
		if err := chromedp.Do(tp.ctx, chromedp.SendKeys(chromedp.ID("token"), "page-token-42\n")); err != nil {
			t.Fatal(err)
		}
		tp.waitFor("the session", `document.getElementById("sessions-body").textContent.includes(`+jsString(tw.id)+`)`)
		tp.waitFor("the stream", `document.getElementById("status").textContent === "live"`)
	})
}

// pageCodex runs the real Codex under scopegate's hook, forwarded to the
// serve the page is open on, with a scripted model: a command outside the
// scope is held on the page and approved once (it runs), the same command
// again is offered again and denied, and a third is approved for the
// session (scope.yml widened, audited).
func pageCodex(t *testing.T, p *pageTab, w *workspace) {
	codex := npmclient.Bin(t, "codex")
	proj, codexHome := filepath.Join(w.root, "codex-proj"), filepath.Join(w.root, "codex-home")
	for _, d := range []string{proj, codexHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", proj, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	script := []string{"date +page-once-%Y", "date +page-once-%Y", "date +page-session-%Y"}
	model := newMockResponses(t, script)
	hookCmd := policy.ShellQuote(scopegateBin) + " --sessions-dir " + policy.ShellQuote(w.sessions) + " --config-dir " + policy.ShellQuote(w.cfg) + " hook codex"
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd, out := codexCommand(ctx, t, codex, codexHome, model.url, hookCmd, proj, filepath.Join(w.root, "home"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for _, step := range []struct{ text, answer string }{
		{"date +page-once-%Y", "once"},
		{"date +page-once-%Y", "deny"},
		{"date +page-session-%Y", "session"},
	} {
		id := p.offerCard(step.text)
		if got := eval[string](p, `document.querySelector('#offer-list .offer[data-id="`+id+`"] .widening').textContent`); got != "--allow-command date" {
			t.Errorf("widening %q", got)
		}
		p.answer(id, step.answer)
	}
	if err := <-done; err != nil {
		t.Fatalf("codex exec: %v\n%s", err, out.String())
	}
	year := time.Now().Format("2006")
	if o := model.output(0); !strings.Contains(o, "page-once-"+year) {
		t.Errorf("approved once: output %q, want the command's", o)
	}
	if o := model.output(1); !strings.Contains(o, "blocked by PreToolUse hook") || !strings.Contains(o, "date is not in shell_commands.allow") {
		t.Errorf("denied: output %q", o)
	}
	if o := model.output(2); !strings.Contains(o, "page-session-"+year) {
		t.Errorf("approved for the session: output %q", o)
	}
	files, _ := filepath.Glob(filepath.Join(w.sessions, "*", "branches", "main", "tools.org"))
	var entries []audit.Entry
	var scopeFile string
	for _, f := range files {
		if !strings.Contains(f, w.id) {
			entries, _ = audit.ReadFile(f, audit.Filter{})
			scopeFile = filepath.Join(filepath.Dir(f), "scope.yml")
		}
	}
	var hooks []string
	expanded, execOnce := 0, 0
	for _, e := range entries {
		switch {
		case e.Decision == audit.DecisionExpanded:
			if e.Resource == "page" && strings.Contains(e.Summary, "date") {
				expanded++
			}
		case e.Mode == audit.ModeHook && e.Channel == "page":
			hooks = append(hooks, e.Answer+"/"+e.Decision+"/"+e.Approved)
		case e.Mode == audit.ModeExec && e.Approved == "once" && e.Channel == "page":
			execOnce++
		}
	}
	if strings.Join(hooks, " ") != "once/allowed/once deny/denied/ session/allowed/session" || expanded != 1 || execOnce != 1 {
		t.Errorf("hook entries %v, %d page expansions, %d exec runs approved once, in %+v", hooks, expanded, execOnce, entries)
	}
	if scope, _ := os.ReadFile(scopeFile); !strings.Contains(string(scope), "date") {
		t.Errorf("scope.yml not widened:\n%s", scope)
	}
}
