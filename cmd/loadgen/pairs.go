package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// pair is one CLI figure: a scopegate command and the baseline it is held
// against, each a whole process run.
type pair struct {
	name           string
	subject, basis []string
}

// runPairs runs each pair rounds times, alternating which of the two runs
// first, and prints the medians and their ratio: the start-up and per-call
// figures of the CLI, measured side by side so that the machine's noise hits
// both alike.
func runPairs(o options, stdout io.Writer) error {
	if o.hello == "" {
		return fmt.Errorf("-mode cli needs -hello, a hello-world Go binary to compare start-up with")
	}
	root, err := os.MkdirTemp("", "scopegate-pairs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		return err
	}
	small := filepath.Join(proj, "small.txt")
	if err := os.WriteFile(small, []byte("hello scopegate\n"), 0o644); err != nil {
		return err
	}
	env := append(os.Environ(), "SCOPEGATE_SESSIONS_DIR="+filepath.Join(root, "sessions"),
		"SCOPEGATE_CONFIG_DIR="+filepath.Join(root, "config"))
	out, err := command(env, o.scopegate, "session", "create", "--name", "pairs", "--worktree", proj).Output()
	if err != nil {
		return fmt.Errorf("session create: %w", err)
	}
	var created struct {
		ID string `json:"session_id"`
	}
	if err := json.Unmarshal(out, &created); err != nil {
		return fmt.Errorf("session create: %w", err)
	}
	if out, err := command(env, o.scopegate, "scope", "expand", "--session", created.ID, "--allow-command", "true").CombinedOutput(); err != nil {
		return fmt.Errorf("scope expand: %v: %s", err, out)
	}
	call := func(tool string, args map[string]any) []string {
		c, _ := json.Marshal(map[string]any{"tool": tool, "args": args, "cwd": proj})
		return []string{o.scopegate, "call", "--session", created.ID, string(c)}
	}
	pairs := []pair{
		{"`scopegate version` vs a hello-world Go binary", []string{o.scopegate, "version"}, []string{o.hello}},
		{"`call` shell `true` vs `sh -c true`", call("shell", map[string]any{"command": "true"}), []string{"sh", "-c", "true"}},
		{"`call` read_file vs `cat`", call("read_file", map[string]any{"path": small}), []string{"cat", small}},
	}
	fmt.Fprintf(stdout, "| figure | scopegate (median) | baseline (median) | ratio |\n|---|---|---|---|\n")
	for _, p := range pairs {
		var a, b []time.Duration
		for i := range o.rounds {
			first, second := p.subject, p.basis
			if i%2 == 1 {
				first, second = second, first
			}
			d1, err := timed(env, first)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			d2, err := timed(env, second)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			if i%2 == 1 {
				d1, d2 = d2, d1
			}
			a, b = append(a, d1), append(b, d2)
		}
		ma, mb := median(a), median(b)
		fmt.Fprintf(stdout, "| %s | %.1f ms | %.1f ms | %.2f× |\n", p.name, ms(ma), ms(mb), float64(ma)/float64(mb))
	}
	return nil
}

func command(env []string, argv ...string) *exec.Cmd {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	return cmd
}

// timed runs argv to its end and returns its wall time.
func timed(env []string, argv []string) (time.Duration, error) {
	cmd := command(env, argv...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%v: %v: %s", argv, err, out)
	}
	return d, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
