package sessions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/scopegate/scopegate/policy"
)

// Expansion is what a user adds to a branch's scope. Every list is
// optional; entries already present are left alone.
type Expansion struct {
	Read, Write, Deny                         []string
	AllowCommands, DenyCommands               []string
	RoamSubdirectories, RoamTags, RoamNodeIDs []string
	// AllowHosts are entries added to the network list (host, .domain,
	// host:port); a scope with network: any is left as it is.
	AllowHosts []string
	// AllowSockets are the absolute paths of unix sockets added to the
	// network list as unix: entries; a scope with network: any becomes
	// the list [any, unix:…].
	AllowSockets []string
	// Network is policy.NetworkAny to make the network unrestricted, else
	// "".
	Network policy.NetworkMode
}

// ExpansionOf is the scope expansion that applies widenings: the one
// mapping from a [policy.WidenFlag] to the list of scope.yml it adds to.
// What cannot be applied is an error, and then nothing is: a blank value,
// a relative path pattern, a host or socket entry a scope would refuse,
// and --network, which widens the whole network only through scope expand
// --network any, never through a grant or a suggestion.
func ExpansionOf(ws ...policy.Widening) (Expansion, error) {
	var x Expansion
	for _, w := range ws {
		var list *[]string
		var validate func(string) error // what a scope would refuse
		switch w.Flag {
		case policy.WidenRead:
			list = &x.Read
		case policy.WidenWrite:
			list = &x.Write
		case policy.WidenCommand:
			list = &x.AllowCommands
		case policy.WidenRoamSubdirectory:
			list = &x.RoamSubdirectories
		case policy.WidenRoamTag:
			list = &x.RoamTags
		case policy.WidenRoamNodeID:
			list = &x.RoamNodeIDs
		case policy.WidenHost:
			list, validate = &x.AllowHosts, policy.ValidateHostEntry
		case policy.WidenSocket:
			list, validate = &x.AllowSockets, policy.ValidateSocketPath
		default:
			return Expansion{}, fmt.Errorf("%w: widening %s %q cannot be applied", ErrInvalidExpansion, w.Flag, w.Value)
		}
		if validate != nil {
			if err := validate(w.Value); err != nil {
				return Expansion{}, fmt.Errorf("%w: widening %s %q cannot be applied: %v", ErrInvalidExpansion, w.Flag, w.Value, err)
			}
		}
		if strings.TrimSpace(w.Value) == "" || w.Flag.IsPath() && !filepath.IsAbs(w.Value) {
			return Expansion{}, fmt.Errorf("%w: widening %s %q cannot be applied", ErrInvalidExpansion, w.Flag, w.Value)
		}
		*list = append(*list, w.Value)
	}
	return x, nil
}

// Widenings are the entries of the expansion that a layer above the scope
// (a managed policy) may refuse, as widenings: its read, write, command,
// host and socket entries, and WidenNetwork for Network. Deny entries
// narrow a scope; nothing above a scope bounds its org-roam entries.
func (e Expansion) Widenings() []policy.Widening {
	var ws []policy.Widening
	for _, l := range []struct {
		flag   policy.WidenFlag
		values []string
	}{{policy.WidenRead, e.Read}, {policy.WidenWrite, e.Write}, {policy.WidenCommand, e.AllowCommands},
		{policy.WidenHost, e.AllowHosts}, {policy.WidenSocket, e.AllowSockets}} {
		for _, v := range l.values {
			ws = append(ws, policy.Widening{Flag: l.flag, Value: v})
		}
	}
	if e.Network != "" {
		ws = append(ws, policy.Widening{Flag: policy.WidenNetwork, Value: e.Network.String()})
	}
	return ws
}

// target is one list of scope.yml an expansion can add to.
type target struct {
	section, key string
	values       []string
}

func (e Expansion) targets() []target {
	return []target{
		{"paths", "read", e.Read},
		{"paths", "write", e.Write},
		{"paths", "deny", e.Deny},
		{"shell_commands", "allow", e.AllowCommands},
		{"shell_commands", "deny", e.DenyCommands},
		{"org_roam_patterns", "subdirectory", e.RoamSubdirectories},
		{"org_roam_patterns", "tags", e.RoamTags},
		{"org_roam_patterns", "node_ids", e.RoamNodeIDs},
	}
}

// Empty reports whether the expansion adds nothing.
func (e Expansion) Empty() bool {
	if len(e.AllowHosts) > 0 || len(e.AllowSockets) > 0 || e.Network != "" {
		return false
	}
	for _, t := range e.targets() {
		if len(t.values) > 0 {
			return false
		}
	}
	return true
}

// Expanded is the outcome of [ExpandScope].
type Expanded struct {
	// Scope is the resulting scope; Data the resulting scope.yml.
	Scope policy.Document
	Data  []byte
	// Added are the new entries per list, keyed "paths.read" etc. (the
	// network section is "network", any included), in the order written;
	// empty when nothing changed (and the file was not rewritten).
	Added map[string][]string
	// Expansion is what was asked for, relative patterns anchored.
	Expansion Expansion
}

// AddedEntry is one entry an expansion added to scope.yml: its list
// ("paths.read", "shell_commands.allow", "network"…) and its value.
type AddedEntry struct {
	List, Value string
}

// Entries are the entries added, list by list in the order of the
// sections of scope.yml (the network last), each list in the order
// written.
func (r Expanded) Entries() []AddedEntry {
	var out []AddedEntry
	lists := make([]string, 0, len(r.Added))
	for _, t := range r.Expansion.targets() {
		lists = append(lists, t.section+"."+t.key)
	}
	for _, l := range append(lists, "network") {
		for _, v := range r.Added[l] {
			out = append(out, AddedEntry{List: l, Value: v})
		}
	}
	return out
}

// ExpandScope adds the expansion to the branch's scope.yml under the
// branch's lock, editing the YAML tree so that comments, order and every
// other valid entry stay. Its path patterns must be anchored first
// (Expansion.Anchor): a relative one is refused. It is idempotent. The
// result must parse and compile, or nothing is written and the error wraps
// ErrInvalidExpansion; an already invalid scope.yml is refused the same way
// (fix it by hand). A missing scope.yml is created.
func ExpandScope(ctx context.Context, branchDir string, add Expansion) (Expanded, error) {
	for _, t := range add.targets() {
		for _, v := range t.values {
			if err := checkValue(v); err != nil {
				return Expanded{}, fmt.Errorf("%w: %s.%s %q: %v", ErrInvalidExpansion, t.section, t.key, v, err)
			}
			if t.section == "paths" && relativePattern(v) {
				return Expanded{}, fmt.Errorf("%w: paths.%s %q is relative: anchor it at the session's root first (Expansion.Anchor)", ErrInvalidExpansion, t.key, v)
			}
		}
	}
	for _, h := range add.AllowHosts {
		if err := policy.ValidateHostEntry(h); err != nil {
			return Expanded{}, fmt.Errorf("%w: network %q: %v", ErrInvalidExpansion, h, err)
		}
	}
	for _, p := range add.AllowSockets {
		if err := policy.ValidateSocketPath(p); err != nil {
			return Expanded{}, fmt.Errorf("%w: network socket %q: %v", ErrInvalidExpansion, p, err)
		}
	}
	if add.Network != "" && add.Network != policy.NetworkAny {
		return Expanded{}, fmt.Errorf("%w: network %q: only any widens the network (use --allow-host for one host)", ErrInvalidExpansion, add.Network)
	}
	if fi, err := os.Stat(branchDir); err != nil || !fi.IsDir() {
		return Expanded{}, fmt.Errorf("expand scope: branch directory %s %w", branchDir, ErrNotFound)
	}
	unlock, err := lockBranch(branchDir)
	if err != nil {
		return Expanded{}, err
	}
	defer unlock()
	if err := ctx.Err(); err != nil {
		return Expanded{}, fmt.Errorf("expand scope: %w", err)
	}
	path := filepath.Join(branchDir, ScopeFile)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Expanded{}, fmt.Errorf("expand scope: %w", err)
	}
	if _, err := policy.ParseDocument(data); err != nil {
		return Expanded{}, fmt.Errorf("%w: %s is invalid, fix it first: %v", ErrInvalidExpansion, path, err)
	}
	out, added, err := expandYAML(data, add)
	if err != nil {
		return Expanded{}, fmt.Errorf("%w: %s: %v", ErrInvalidExpansion, path, err)
	}
	if len(added) == 0 {
		out = data
	}
	doc, err := policy.ParseDocument(out)
	if err != nil {
		return Expanded{}, fmt.Errorf("%w: %v", ErrInvalidExpansion, err)
	}
	// Home is only needed to accept ~/ patterns here; the gateway compiles
	// the scope with the real one.
	if _, err := policy.Compile(doc, policy.Env{Home: "/"}); err != nil {
		return Expanded{}, fmt.Errorf("%w: %v", ErrInvalidExpansion, err)
	}
	if len(added) > 0 {
		if err := writeFile(path, out); err != nil {
			return Expanded{}, fmt.Errorf("expand scope: %w", err)
		}
	}
	return Expanded{Scope: doc, Data: out, Added: added, Expansion: add}, nil
}

// Anchor makes the relative path patterns of an expansion absolute at
// the session's root (Metadata.Root), which root gives when a pattern
// first needs it: `docs/**` means the project's docs, never every docs
// directory on the machine. Patterns that start with /, ~ or ** (anywhere,
// on purpose) are kept, and so are blank ones, which ExpandScope refuses.
// A relative pattern on a session with no root is refused with an
// explanation.
func (e Expansion) Anchor(root func() string) (Expansion, error) {
	dir, asked := "", false
	anchor := func(list []string, key string) ([]string, error) {
		out := make([]string, 0, len(list))
		for _, p := range list {
			if !relativePattern(p) {
				out = append(out, p)
				continue
			}
			if !asked {
				dir, asked = root(), true
			}
			if dir == "" {
				return nil, fmt.Errorf("%w: paths.%s %q is relative and this session has no project root or worktree to anchor it at: give an absolute pattern (/…), ~/…, or **/… to match anywhere",
					ErrInvalidExpansion, key, p)
			}
			out = append(out, policy.EscapeGlob(filepath.Clean(dir))+"/"+strings.TrimPrefix(p, "./"))
		}
		return out, nil
	}
	var err error
	if e.Read, err = anchor(e.Read, "read"); err != nil {
		return e, err
	}
	if e.Write, err = anchor(e.Write, "write"); err != nil {
		return e, err
	}
	e.Deny, err = anchor(e.Deny, "deny")
	return e, err
}

// relativePattern reports whether a path pattern is relative to the
// session's root: not blank, and starting with none of /, ~, ** and $
// (an unresolved variable, which compiling refuses).
func relativePattern(p string) bool {
	if strings.TrimSpace(p) == "" {
		return false
	}
	for _, prefix := range []string{"/", "~", "**", "$"} {
		if strings.HasPrefix(p, prefix) {
			return false
		}
	}
	return true
}

func checkValue(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("empty")
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return fmt.Errorf("control character %U", r)
		}
	}
	return nil
}

// expandYAML appends the expansion's missing entries to the YAML tree of
// data and re-encodes it.
func expandYAML(data []byte, add Expansion) ([]byte, map[string][]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, err
	}
	var prefix []byte
	if doc.Kind == 0 {
		// Empty or only comments: the parser keeps no node to hang the
		// comments on, so keep the text itself in front.
		doc = yaml.Node{Kind: yaml.DocumentNode}
		if t := bytes.TrimSpace(data); len(t) > 0 {
			prefix = append(t, '\n')
		}
	}
	if len(doc.Content) == 0 {
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.MappingNode})
	}
	root := doc.Content[0]
	if isNull(root) {
		*root = yaml.Node{Kind: yaml.MappingNode, HeadComment: root.HeadComment, LineComment: root.LineComment, FootComment: root.FootComment}
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("the document is not a mapping")
	}
	if root.Style&yaml.FlowStyle != 0 && len(root.Content) == 0 {
		root.Style = 0 // "{}" grows into block style
	}
	added := map[string][]string{}
	for _, t := range add.targets() {
		if len(t.values) == 0 {
			continue
		}
		sec, err := child(root, t.section, yaml.MappingNode)
		if err != nil {
			return nil, nil, err
		}
		seq, err := child(sec, t.key, yaml.SequenceNode)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", t.section, err)
		}
		for _, v := range t.values {
			if hasScalar(seq, v) {
				continue
			}
			n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
			if seq.Style&yaml.FlowStyle != 0 || yaml11Word(v) {
				n.Style = yaml.DoubleQuotedStyle
			}
			seq.Content = append(seq.Content, n)
			added[t.section+"."+t.key] = append(added[t.section+"."+t.key], v)
		}
	}
	if err := expandNetwork(root, add, added); err != nil {
		return nil, nil, err
	}
	if len(added) == 0 {
		return data, added, nil
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, nil, err
	}
	return append(prefix, buf.Bytes()...), added, nil
}

// expandNetwork widens the network section of root: to any, by the hosts
// of add, by its sockets. A missing, null or none section becomes the
// list of the hosts and sockets; a list grows; any stays any, and becomes
// the list [any, unix:…] to name sockets (a scalar any names none). A
// list that names sockets keeps them when it widens to any: any is put
// first. added["network"] lists the new entries.
func expandNetwork(root *yaml.Node, add Expansion, added map[string][]string) error {
	if len(add.AllowHosts) == 0 && len(add.AllowSockets) == 0 && add.Network == "" {
		return nil
	}
	anyWord := policy.NetworkAny.String() // the mode, and an entry of a list
	var key, v *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "network" {
			key, v = root.Content[i], root.Content[i+1]
		}
	}
	if v == nil {
		key, v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "network"}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: policy.NetworkNone.String()}
		root.Content = append(root.Content, key, v)
	}
	anyScalar := v.Kind == yaml.ScalarNode && v.Value == anyWord && !isNull(v)
	if add.Network == policy.NetworkAny && !anyScalar && !namesSockets(v) {
		*v = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: anyWord, HeadComment: v.HeadComment, LineComment: v.LineComment, FootComment: v.FootComment}
		added["network"] = append(added["network"], anyWord)
		anyScalar = true
	}
	if anyScalar && len(add.AllowSockets) == 0 {
		return nil // unrestricted, and no socket to name
	}
	if v.Kind == yaml.ScalarNode {
		// none, null or any: no entries yet (any comes along as one). A
		// comment after the word moves to the key's line.
		if key.LineComment == "" {
			key.LineComment = v.LineComment
		}
		*v = yaml.Node{Kind: yaml.SequenceNode, HeadComment: v.HeadComment, FootComment: v.FootComment}
		if anyScalar {
			v.Content = append(v.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: anyWord})
		}
	}
	if v.Kind != yaml.SequenceNode {
		return fmt.Errorf("network is not none, any or a list")
	}
	entry := func(s string) *yaml.Node {
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
		if v.Style&yaml.FlowStyle != 0 {
			n.Style = yaml.DoubleQuotedStyle
		}
		return n
	}
	if add.Network == policy.NetworkAny && !hasScalar(v, anyWord) {
		// A list that names sockets: they stay, with every host.
		v.Content = append([]*yaml.Node{entry(anyWord)}, v.Content...)
		added["network"] = append(added["network"], anyWord)
	}
	var entries []string
	if !hasScalar(v, anyWord) {
		entries = append(entries, add.AllowHosts...)
	}
	for _, p := range add.AllowSockets {
		entries = append(entries, policy.SocketEntry(p))
	}
	for _, h := range entries {
		if hasScalar(v, h) {
			continue
		}
		v.Content = append(v.Content, entry(h))
		added["network"] = append(added["network"], h)
	}
	return nil
}

// namesSockets reports whether a network value is a list with a unix:
// entry.
func namesSockets(v *yaml.Node) bool {
	if v.Kind != yaml.SequenceNode {
		return false
	}
	for _, n := range v.Content {
		if n.Kind == yaml.ScalarNode && strings.HasPrefix(n.Value, policy.SocketEntry("")) {
			return true
		}
	}
	return false
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// child returns the value of key in mapping m, creating it (of kind) when
// missing or null.
func child(m *yaml.Node, key string, kind yaml.Kind) (*yaml.Node, error) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != key {
			continue
		}
		v := m.Content[i+1]
		if isNull(v) {
			*v = yaml.Node{Kind: kind, LineComment: v.LineComment, HeadComment: v.HeadComment, FootComment: v.FootComment}
		}
		if v.Kind != kind {
			return nil, fmt.Errorf("%s is not a %s", key, kindName(kind))
		}
		if v.Style&yaml.FlowStyle != 0 && len(v.Content) == 0 && kind == yaml.MappingNode {
			v.Style = 0
		}
		return v, nil
	}
	v := &yaml.Node{Kind: kind}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v, nil
}

func kindName(k yaml.Kind) string {
	if k == yaml.MappingNode {
		return "mapping"
	}
	return "list"
}

func hasScalar(seq *yaml.Node, v string) bool {
	for _, n := range seq.Content {
		if n.Kind == yaml.ScalarNode && n.Value == v {
			return true
		}
	}
	return false
}

// yaml11Word reports whether a YAML 1.1 reader (Emacs's, gptel's) would
// read v unquoted as a boolean or null: such entries are written quoted, so
// that `--allow-command no` stays the command "no" for every reader.
func yaml11Word(v string) bool {
	switch strings.ToLower(v) {
	case "y", "yes", "n", "no", "on", "off", "true", "false", "null", "~":
		return true
	}
	return false
}
