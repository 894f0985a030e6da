// Package orgcheck asks a real Emacs how it parses an Org file: it runs
// `emacs --batch -Q` with org-element on the file and returns the level-1
// headlines with their DECISION property. Tests across the repository use it
// to prove that tools.org opens as intended in Org mode.
package orgcheck

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// ErrNoEmacs reports that no emacs executable is on PATH.
var ErrNoEmacs = errors.New("emacs not found")

// Headline is a level-1 headline as org-element-parse-buffer sees it.
type Headline struct {
	Level    int
	Title    string // :raw-value
	Decision string // the DECISION property, "" when absent
}

// script parses the file named by $ORGCHECK_FILE and prints one line per
// level-1 headline: "H<TAB>level<TAB>base64(decision)<TAB>base64(title)",
// then "N<TAB>count of all headlines".
const script = `
(progn
  (require 'org)
  (require 'org-element)
  (let ((file (getenv "ORGCHECK_FILE"))
        (all 0))
    (with-temp-buffer
      (insert-file-contents file)
      (let ((org-inhibit-startup t)) (org-mode))
      (let ((tree (org-element-parse-buffer)))
        (org-element-map tree 'headline
          (lambda (h)
            (setq all (1+ all))
            (when (= (org-element-property :level h) 1)
              (princ (format "H\t%d\t%s\t%s\n"
                             (org-element-property :level h)
                             (base64-encode-string
                              (encode-coding-string (or (org-element-property :DECISION h) "") 'utf-8) t)
                             (base64-encode-string
                              (encode-coding-string (or (org-element-property :raw-value h) "") 'utf-8) t))))))))
    (princ (format "N\t%d\n" all))))
`

// Headlines returns the level-1 headlines of the Org file at path.
func Headlines(ctx context.Context, path string) ([]Headline, error) {
	emacs, err := exec.LookPath("emacs")
	if err != nil {
		return nil, ErrNoEmacs
	}
	cmd := exec.CommandContext(ctx, emacs, "--batch", "-Q", "--eval", script)
	cmd.Env = append(os.Environ(), "ORGCHECK_FILE="+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("emacs on %s: %w: %s", path, err, strings.TrimSpace(stderr.String()))
	}
	hs, err := parseOutput(stdout.Bytes())
	if err != nil {
		return nil, fmt.Errorf("emacs on %s: %w (stderr: %s)", path, err, strings.TrimSpace(stderr.String()))
	}
	return hs, nil
}

func parseOutput(out []byte) ([]Headline, error) {
	hs := []Headline{}
	done := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		switch {
		case len(f) == 4 && f[0] == "H":
			level, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, fmt.Errorf("bad level %q", f[1])
			}
			dec, err1 := base64.StdEncoding.DecodeString(f[2])
			title, err2 := base64.StdEncoding.DecodeString(f[3])
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("bad output line: %w", err)
			}
			hs = append(hs, Headline{Level: level, Title: string(title), Decision: string(dec)})
		case len(f) == 2 && f[0] == "N":
			done = true
		}
	}
	if !done {
		return nil, errors.New("no summary line in output")
	}
	return hs, nil
}

// Require returns the level-1 headlines of path for a test. Without emacs
// the test is skipped, or fails when CI=true.
func Require(t testing.TB, path string) []Headline {
	t.Helper()
	hs, err := Headlines(t.Context(), path)
	if errors.Is(err, ErrNoEmacs) {
		if os.Getenv("CI") == "true" {
			t.Fatal("emacs is required when CI=true (scripts/install-test-deps.sh installs it)")
		}
		t.Skip("emacs not installed")
	}
	if err != nil {
		t.Fatal(err)
	}
	return hs
}
