package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the repository root, from this package's directory.
const repoRoot = "../.."

// TestDocLinks: every relative link in README.md and docs/*.md resolves to
// a file of the repository and, with a #fragment, to a heading of that
// file (its anchor as GitHub makes it); no page names anything under
// ../shared, which a reader of the repository does not have.
func TestDocLinks(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(repoRoot, "README.md"))
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		anchors[path] = headingAnchors(string(data))
		return anchors[path], nil
	}
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, page)
		if strings.Contains(string(data), "../shared") {
			t.Errorf("%s names ../shared, which is outside the repository", rel)
		}
		for _, link := range markdownLinks(string(data)) {
			target, frag, _ := strings.Cut(link, "#")
			path := page
			if target != "" {
				path = filepath.Join(filepath.Dir(page), target)
				if !strings.HasPrefix(filepath.Clean(path), filepath.Clean(repoRoot)+string(filepath.Separator)) && filepath.Clean(path) != filepath.Clean(repoRoot) {
					t.Errorf("%s: link %q leaves the repository", rel, link)
					continue
				}
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %q: %v", rel, link, err)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			a, err := anchorsOf(path)
			if err != nil {
				t.Errorf("%s: link %q: %v", rel, link, err)
				continue
			}
			if !a[frag] {
				t.Errorf("%s: link %q: no heading with anchor #%s", rel, link, frag)
			}
		}
	}
}

// TestDocsIndex: docs/README.md links every page of docs/.
func TestDocsIndex(t *testing.T) {
	index, err := os.ReadFile(filepath.Join(repoRoot, "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	links := markdownLinks(string(index))
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		name := filepath.Base(p)
		if name != "README.md" && !slices.Contains(links, name) {
			t.Errorf("docs/README.md does not index %s", name)
		}
	}
}

// TestHeadingAnchors: anchors are made as GitHub makes them.
func TestHeadingAnchors(t *testing.T) {
	got := headingAnchors("# A b\n## `scopegate audit verify`\n```\n# not a heading\n```\n## Files and toolchains below /tmp\n## A b\n### What Claude Code does with `ask` (measured)\n")
	for _, want := range []string{"a-b", "scopegate-audit-verify", "files-and-toolchains-below-tmp", "a-b-1", "what-claude-code-does-with-ask-measured"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a line in a code block made an anchor")
	}
}

var (
	// mdLink is an inline link or image: [text](target) or ![alt](target).
	mdLink = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	// codeSpan is inline code, whose text is not a link.
	codeSpan = regexp.MustCompile("`[^`\n]*`")
)

// markdownLinks are the relative link targets of a page, outside code.
func markdownLinks(doc string) []string {
	var out []string
	for _, line := range proseLines(doc) {
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			l := m[1]
			if strings.Contains(l, "://") || strings.HasPrefix(l, "mailto:") {
				continue
			}
			out = append(out, l)
		}
	}
	return out
}

// headingAnchors are the anchors GitHub gives a page's headings: lower
// case, punctuation but '-' and '_' dropped, spaces made '-', a repeated
// one suffixed -1, -2….
func headingAnchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(doc) {
		text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !strings.HasPrefix(line, "#") || !ok {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			seen[a]++
			a += "-" + strconv.Itoa(n)
		} else {
			seen[a] = 1
		}
		out[a] = true
	}
	return out
}

// proseLines are the lines of a page outside fenced code blocks.
func proseLines(doc string) []string {
	var out []string
	fence := ""
	for line := range strings.Lines(doc) {
		line = strings.TrimRight(line, "\n")
		trimmed := strings.TrimLeft(line, " ")
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		out = append(out, line)
	}
	return out
}
