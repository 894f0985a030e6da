package roam

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/scopegate/scopegate/internal/atomicfile"
)

// MaxContent is the most file text a [Node] carries; the rest is cut and
// [Node.Truncated] set.
const MaxContent = 1 << 20

const (
	// maxEditSize bounds the files AddTags and Link rewrite in memory.
	maxEditSize = 16 << 20
	// headerScan is how much of each file Read looks at for the :ID:; the
	// file-level property drawer is at the very top.
	headerScan = 64 << 10
	// maxSuffix bounds the -2, -3… suffixes tried when a file name is taken.
	maxSuffix = 100
)

// Store reads and writes org-roam nodes below one directory. The zero value
// of Now and NewID is usable; Dir must be set.
type Store struct {
	// Dir is the org-roam directory. Create makes it (0700) when missing.
	Dir string
	// Now stamps new file names; nil means time.Now.
	Now func() time.Time
	// NewID returns the ID of a new node; nil means a random lower-case UUID v4,
	// as org-roam (org-id) makes them.
	NewID func() string
}

// Node is one org-roam file node.
type Node struct {
	// ID is the :ID: of the file-level property drawer.
	ID string `json:"id"`
	// Title is the file's first #+title.
	Title string `json:"title"`
	// Tags are the file's #+filetags, in order, without duplicates.
	Tags []string `json:"tags"`
	// File is the file's slash-separated path relative to the directory.
	File string `json:"file"`
	// Content is the file text, at most MaxContent bytes.
	Content string `json:"content"`
	// Truncated reports that Content was cut at MaxContent.
	Truncated bool `json:"truncated"`
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) newID() string {
	if s.NewID != nil {
		return s.NewID()
	}
	return newUUID()
}

// newUUID returns a random UUID v4 in lower case.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// openRoot opens Dir, creating it first when create is set.
func (s *Store) openRoot(create bool) (*os.Root, error) {
	if s.Dir == "" {
		return nil, errors.New("roam directory not set")
	}
	if create {
		if err := os.MkdirAll(s.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("create roam directory %q: %w", s.Dir, err)
		}
	}
	root, err := os.OpenRoot(s.Dir)
	if err != nil {
		return nil, fmt.Errorf("open roam directory %q: %w", s.Dir, err)
	}
	return root, nil
}

// Create writes a new node file <subdirectory>/<YYYYMMDDHHMMSS>-<slug>.org
// and returns the node. It never overwrites a file: a taken name gets a -2,
// -3… suffix. The title is trimmed and must be one line; the subdirectory
// must stay below Dir, also through symlinks.
func (s *Store) Create(ctx context.Context, title, subdirectory string, tags []string) (Node, error) {
	if err := ctx.Err(); err != nil {
		return Node{}, err
	}
	title, err := checkTitle(title)
	if err != nil {
		return Node{}, err
	}
	sub, err := checkSubdir(subdirectory)
	if err != nil {
		return Node{}, err
	}
	if tags, err = checkTags(tags); err != nil {
		return Node{}, err
	}
	id := s.newID()
	if err := checkID("node_id", id); err != nil {
		return Node{}, fmt.Errorf("new node id: %w", err)
	}
	root, err := s.openRoot(true)
	if err != nil {
		return Node{}, err
	}
	defer root.Close()
	if sub != "." {
		if err := root.MkdirAll(sub, 0o700); err != nil {
			return Node{}, fmt.Errorf("create subdirectory %q: %w", sub, err)
		}
	}
	content := render(id, title, tags)
	base := path.Join(sub, s.now().Format("20060102150405")+"-"+slug(title))
	for n := 1; n <= maxSuffix; n++ {
		name := base + ".org"
		if n > 1 {
			name = fmt.Sprintf("%s-%d.org", base, n)
		}
		err := writeNew(root, name, content, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return Node{}, fmt.Errorf("create node %q: %w", name, err)
		}
		return Node{ID: id, Title: title, Tags: tags, File: name, Content: content}, nil
	}
	return Node{}, fmt.Errorf("create node %q: %d file names taken: %w", base, maxSuffix, fs.ErrExist)
}

// writeNew creates name (O_EXCL) in root and writes content to it, removing
// it again when the write fails.
func writeNew(root *os.Root, name, content string, perm fs.FileMode) error {
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = io.WriteString(f, content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(name)
	}
	return err
}

// Read returns the node with the given ID. It is [ErrNotFound] when no
// .org file below Dir (hidden directories and symlinks skipped) has it.
func (s *Store) Read(ctx context.Context, id string) (Node, error) {
	if err := checkID("node_id", id); err != nil {
		return Node{}, err
	}
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return Node{}, fmt.Errorf("read node %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Node{}, err
	}
	defer root.Close()
	n, err := read(ctx, root, id)
	if err != nil {
		return Node{}, fmt.Errorf("read node %q: %w", id, err)
	}
	return n, nil
}

func read(ctx context.Context, root *os.Root, id string) (Node, error) {
	name, err := find(ctx, root, id)
	if err != nil {
		return Node{}, err
	}
	src, truncated, err := readFile(root, name, MaxContent)
	if err != nil {
		return Node{}, err
	}
	h, err := parseHeader(src)
	if err != nil || h.id != id {
		// Changed since find looked at it.
		return Node{}, ErrNotFound
	}
	return node(h, name, src, truncated), nil
}

func node(h header, name, src string, truncated bool) Node {
	if len(src) > MaxContent {
		src, truncated = src[:MaxContent], true
	}
	if truncated {
		// Do not cut a UTF-8 sequence in half.
		for i := 0; i < utf8.UTFMax && len(src) > 0; i++ {
			if r, _ := utf8.DecodeLastRuneInString(src); r != utf8.RuneError {
				break
			}
			src = src[:len(src)-1]
		}
	}
	tags := h.tags
	if tags == nil {
		tags = []string{}
	}
	return Node{ID: h.id, Title: h.title, Tags: tags, File: name, Content: src, Truncated: truncated}
}

// readFile reads at most limit bytes of name; truncated reports there was more.
func readFile(root *os.Root, name string, limit int64) (src string, truncated bool, err error) {
	f, err := root.Open(name)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", false, fmt.Errorf("read %q: %w", name, err)
	}
	if int64(len(b)) > limit {
		return string(b[:limit]), true, nil
	}
	return string(b), false, nil
}

// nodeFile reports whether a directory entry is an Org file org-roam would
// index: a regular *.org file that is not hidden, a lock or an auto-save file.
func nodeFile(d fs.DirEntry) bool {
	name := d.Name()
	return d.Type().IsRegular() && strings.HasSuffix(name, ".org") &&
		!strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "#")
}

// find returns the name of the file whose property drawer has :ID: id. The
// walk does not follow symlinks and skips hidden directories and what it
// cannot read.
func find(ctx context.Context, root *os.Root, id string) (string, error) {
	var found string
	err := fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			if name == "." {
				return err
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if name != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if !nodeFile(d) {
			return nil
		}
		src, _, err := readFile(root, name, headerScan)
		if err != nil {
			return nil
		}
		if h, err := parseHeader(src); err == nil && h.id == id {
			found = name
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("scan roam directory: %w", err)
	}
	if found == "" {
		return "", ErrNotFound
	}
	return found, nil
}

// AddTags merges tags into the node's #+filetags (keeping the order, adding
// only what is new) and returns the node. The file is replaced atomically
// under a lock, so concurrent AddTags calls keep every tag.
func (s *Store) AddTags(ctx context.Context, id string, tags []string) (Node, error) {
	if err := checkID("node_id", id); err != nil {
		return Node{}, err
	}
	tags, err := checkTags(tags)
	if err != nil {
		return Node{}, err
	}
	if len(tags) == 0 {
		return Node{}, &InvalidError{Arg: "tags", Reason: "at least one tag is needed"}
	}
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return Node{}, fmt.Errorf("tag node %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Node{}, err
	}
	defer root.Close()
	n, err := update(ctx, root, id, func(src string, h header) (string, bool) {
		return withTags(src, h, tags)
	})
	if err != nil {
		return Node{}, fmt.Errorf("tag node %q: %w", id, err)
	}
	return n, nil
}

// Link appends an ID link to the target node, on its own line, to the source
// node's file, unless that file already links to the target. Both must exist.
// It returns the source node.
func (s *Store) Link(ctx context.Context, sourceID, targetID string) (Node, error) {
	if err := checkID("source_id", sourceID); err != nil {
		return Node{}, err
	}
	if err := checkID("target_id", targetID); err != nil {
		return Node{}, err
	}
	root, err := s.openRoot(false)
	if errors.Is(err, fs.ErrNotExist) {
		return Node{}, fmt.Errorf("link target %q: %w", targetID, ErrNotFound)
	}
	if err != nil {
		return Node{}, err
	}
	defer root.Close()
	target, err := read(ctx, root, targetID)
	if err != nil {
		return Node{}, fmt.Errorf("link target %q: %w", targetID, err)
	}
	desc := target.Title
	if desc == "" {
		desc = targetID
	}
	n, err := update(ctx, root, sourceID, func(src string, _ header) (string, bool) {
		return withLink(src, targetID, desc)
	})
	if err != nil {
		return Node{}, fmt.Errorf("link node %q to %q: %w", sourceID, targetID, err)
	}
	return n, nil
}

// update finds the node's file and, holding the lock of its directory,
// re-reads it, applies edit and replaces the file when edit changed it.
func update(ctx context.Context, root *os.Root, id string, edit func(src string, h header) (string, bool)) (Node, error) {
	// A concurrent rename can move the file between find and lock; look again.
	for range 3 {
		name, err := find(ctx, root, id)
		if err != nil {
			return Node{}, err
		}
		n, ok, err := updateFile(root, name, id, edit)
		if err != nil || ok {
			return n, err
		}
	}
	return Node{}, ErrNotFound
}

// updateFile edits name under the lock of its directory; ok is false when the
// file is gone or no longer holds the node.
func updateFile(root *os.Root, name, id string, edit func(src string, h header) (string, bool)) (n Node, ok bool, err error) {
	dir, err := lockDir(root, path.Dir(name))
	if err != nil {
		return Node{}, false, err
	}
	defer dir.unlock()
	info, err := root.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return Node{}, false, nil
	}
	if err != nil {
		return Node{}, false, err
	}
	src, truncated, err := readFile(root, name, maxEditSize)
	if errors.Is(err, fs.ErrNotExist) {
		return Node{}, false, nil
	}
	if err != nil {
		return Node{}, false, err
	}
	if truncated {
		return Node{}, false, fmt.Errorf("node file %q is larger than %d bytes", name, maxEditSize)
	}
	h, err := parseHeader(src)
	if err != nil || h.id != id {
		return Node{}, false, nil
	}
	out, changed := edit(src, h)
	if changed {
		if err := replace(root, name, out, info.Mode().Perm()); err != nil {
			return Node{}, false, err
		}
		if h, err = parseHeader(out); err != nil {
			return Node{}, false, fmt.Errorf("parse edited %q: %w", name, err)
		}
	}
	return node(h, name, out, false), true, nil
}

// replace writes content over name (atomicfile.WriteIn), durably: readers
// see the old or the new file, never a torn one, and the new one survives
// a crash. It keeps mode perm, the mode of the file it replaces.
func replace(root *os.Root, name, content string, perm fs.FileMode) error {
	return atomicfile.WriteIn(root, name, []byte(content), perm, atomicfile.Options{Durable: true, ExactPerm: true})
}
