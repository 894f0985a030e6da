package policy

import (
	"slices"
	"sort"
	"strings"
	"sync"
)

// effect is what an option (or its value) makes a program do.
type effect uint8

const (
	effNone        effect = iota
	effRead               // the value is a path that is read
	effWrite              // the value is a path that is written
	effChdir              // the value is a directory the program works in
	effExec               // the value or the option runs another program
	effCode               // the value is inline code
	effConfig             // changes or loads configuration that can run programs
	effDanger             // dangerous for another reason (see why)
	effInPlace            // the operands are rewritten in place
	effPattern            // the value is the pattern/script (no pattern operand then)
	effPatternFile        // the value is a file holding the pattern/script
)

// dangerous reports whether an effect is refused unless an allow entry names
// the option explicitly.
func (e effect) dangerous() bool {
	return e == effExec || e == effCode || e == effConfig || e == effDanger
}

// arity says whether an option takes a value.
type arity uint8

const (
	flagOpt     arity = iota // no value
	valueOpt                 // a value, attached or the next argument
	optValueOpt              // a value only when attached (--opt=v, -ov)
	pairOpt                  // a name and a value, the next two arguments (jq --arg NAME VALUE); the value is the second
)

// option is one option of a program; its names are synonyms (the first is
// its identity, used to match deny entries by meaning).
type option struct {
	names []string
	arity arity
	eff   effect
	why   string
	stop  bool     // the arguments after it belong to something else (python -m)
	conn  connKind // the value names where the program connects (prog_hosts.go)
}

// operandMode says what a program does with its operands.
type operandMode uint8

const (
	opRead         operandMode = iota // path-like operands are read
	opWrite                           // every operand is written
	opWriteLast                       // the last operand is written, the others read
	opPatternFirst                    // the first operand is a pattern or script, the rest read
	opSkipFirst                       // the first operand is not a file (mode, owner), the rest written
	opNone                            // operands are not files
	opWriteSecond                     // the second operand (if any) is written (uniq, xxd)
	opWriteFirst                      // the first operand is written, the others read (zip)
)

// programCheck is a program's own check, for what its table row cannot say
// (a sed script's w command, find's -exec, git's configuration): it adds
// violations to c for the parsed command p, given the allow entries that
// matched it and the shell state (st.cwd is the directory its relative
// operands are in, after its -C options).
type programCheck func(c *checker, p *parsed, allowed allowEntries, st *shellState)

// spec describes a program for the checker: its options, what its operands
// are, its subcommands, and whether it runs another command.
type spec struct {
	opts       []option
	operands   operandMode
	singleDash bool // long options take one dash (go, find)
	posixStop  bool // options end at the first operand
	// scriptArgs: the first operand is a script (or a shell's command
	// string), the others are its own arguments, not the program's.
	scriptArgs bool
	// subs are subcommands, selected by the first operand.
	subs map[string]*spec
	// defSub is the spec of subcommands not in subs.
	defSub *spec
	// subDanger are subcommands that are dangerous in themselves.
	subDanger map[string]string
	// wrapper: the operands (after skip of them) are a command to run.
	wrapper bool
	skip    int
	// extra is the program's own check, run after the generic one.
	extra programCheck
	// makesDirs: extra records the directories the program makes in the
	// walk's state (shellState.made), shared with it (mkdir).
	makesDirs bool
	// runsOrWrites: extra finds options that run programs or write files
	// that opts does not list (find's expression).
	runsOrWrites bool
	// namesOnly is an option that makes the operands names to print,
	// nothing read below them (ls -d).
	namesOnly string
	// ownOperands is an option under which the operands are left to the
	// program's own check (ln -s, whose targets are relative to the link).
	ownOperands string
	// index is the name index of opts, made on first use (a call uses few
	// of the table's programs); nil until build.
	index func() specIndex
	// rewrite turns a program's own argument syntax into the usual one
	// (tar's old-style "xf archive").
	rewrite func([]arg) []arg
	// assignsFirst: NAME=VALUE operands before the wrapped command (env).
	assignsFirst bool
	// appendsInput, when set, says that the wrapped command gets more
	// arguments at run time (xargs): it returns the string that input
	// replaces in the command's arguments instead of being appended to
	// them (xargs -I), or "".
	appendsInput func(p *parsed) string
	// split names an option whose value is split into words and run (env -S).
	split string
	// abbrev: subcommands may be abbreviated to a unique prefix (npm).
	abbrev bool
	// aliases are other names of subcommands (npm's "innit" for init),
	// resolved before abbreviations, which may abbreviate them too.
	aliases map[string]string
	// imply adds the options that others imply (rm --interactive=never is
	// -f), so that deny entries match by meaning.
	imply func(p *parsed)
}

// specIndex indexes a spec's options by name.
type specIndex struct {
	byName map[string]*option
	// multi are the options with multi-letter single-dash names (-TT).
	multi []string
}

// lookup returns the option named name, or nil.
func (sp *spec) lookup(name string) *option {
	if sp == nil || sp.index == nil {
		return nil
	}
	return sp.index().byName[name]
}

// build readies the name index, made on first use, of the spec and its
// subcommands; it is called once per table entry.
func (sp *spec) build() *spec {
	sp.index = sync.OnceValue(sp.makeIndex)
	for _, sub := range sp.subs {
		if sub.index == nil {
			sub.build()
		}
	}
	if sp.defSub != nil && sp.defSub.index == nil {
		sp.defSub.build()
	}
	return sp
}

// makeIndex indexes the options by name.
func (sp *spec) makeIndex() specIndex {
	ix := specIndex{byName: make(map[string]*option, len(sp.opts)*2)}
	for i := range sp.opts {
		for _, n := range sp.opts[i].names {
			ix.byName[n] = &sp.opts[i]
			if len(n) > 2 && !strings.HasPrefix(n, "--") {
				ix.multi = append(ix.multi, n)
			}
		}
	}
	return ix
}

// lookupLong finds a long option by exact name, by unambiguous prefix (GNU
// getopt_long and git accept abbreviations), or — failing closed — by a
// prefix shared with a dangerous option.
func (sp *spec) lookupLong(name string) *option {
	if o := sp.lookup(name); o != nil {
		return o
	}
	if sp == nil || len(name) < 3 {
		return nil
	}
	var found, danger *option
	n := 0
	for i := range sp.opts {
		o := &sp.opts[i]
		for _, full := range o.names {
			if len(full) > len(name) && strings.HasPrefix(full, name) && strings.HasPrefix(full, "--") == strings.HasPrefix(name, "--") {
				if found != o {
					n++
				}
				found = o
				if o.eff.dangerous() {
					danger = o
				}
			}
		}
	}
	if danger != nil {
		return danger
	}
	if n == 1 {
		return found
	}
	return nil
}

// occurrence is one option found on a command line.
type occurrence struct {
	opt   *option // nil for an option the table does not know
	id    string  // identity: the option's first name, or the text as given
	text  string  // the argument as given
	value arg
	has   bool // a value was given
}

// parsed is a command line split into options and operands by a spec.
type parsed struct {
	prog    string // base name
	args    []arg  // the whole argv
	sp      *spec
	occ     []occurrence
	pos     []arg // operands, in order
	posIdx  []int // index in args of each operand
	subPath []string
	leaf    *spec // the spec of the deepest subcommand parsed
	// dynamicSub is set when the subcommand is known only at run time.
	dynamicSub bool
	// rest is set for wrappers: the argv of the wrapped command.
	rest []arg
	// unknownBeforeEnd is set when an argument known only at run time
	// stands where options are still parsed.
	unknownOpts bool
}

// has reports whether the option with identity id was given.
func (p *parsed) has(id string) bool {
	for _, o := range p.occ {
		if o.id == id {
			return true
		}
	}
	return false
}

// values returns the values given to the option with identity id.
func (p *parsed) values(id string) []arg {
	var out []arg
	for _, o := range p.occ {
		if o.id == id && o.has {
			out = append(out, o.value)
		}
	}
	return out
}

// parseArgs splits args (argv without the program) by a spec. It descends
// into subcommands; for wrappers it stops at the wrapped command.
func parseArgs(prog string, sp *spec, argv []arg) *parsed {
	if sp != nil && sp.rewrite != nil {
		argv = sp.rewrite(argv)
	}
	p := &parsed{prog: prog, args: argv, sp: sp, leaf: sp, occ: make([]occurrence, 0, len(argv))}
	p.parse(sp, argv, 0)
	if sp != nil && sp.imply != nil {
		sp.imply(p)
	}
	return p
}

// parse reads argv by the spec: options (with their values and
// synonyms), operands, subcommands and a wrapped command.
func (p *parsed) parse(sp *spec, argv []arg, base int) {
	endOpts := false
	named := false // the subcommand of a spec with no row for it is named
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		operand := !a.known || a.procSubst || endOpts || a.s == "-" || len(a.s) < 2 || !strings.HasPrefix(a.s, "-")
		if operand {
			if !a.known && !endOpts {
				p.unknownOpts = true
			}
			p.addPos(a, base+i)
			if sp != nil && !endOpts && !named && sp.stopsAtOperand() {
				if p.afterOperand(sp, argv, i, base) {
					return
				}
				endOpts = sp.posixStop
				// git submodule add URL PATH: the operands after the
				// subcommand's name are operands, not more names.
				named = sp.subs != nil || sp.defSub != nil || sp.subDanger != nil
			}
			continue
		}
		s := a.s
		if s == "--" {
			endOpts = true
			if sp != nil && sp.wrapper && i+1 < len(argv) {
				// env -- CMD, timeout -- 5 CMD, xargs -- CMD: the command follows.
				p.addPos(argv[i+1], base+i+1)
				if p.afterOperand(sp, argv, i+1, base) {
					return
				}
			}
			continue
		}
		exact := false
		if sp != nil && !strings.HasPrefix(s, "--") {
			name, _, _ := strings.Cut(s, "=")
			exact = len(name) > 2 && sp.lookup(name) != nil // -TT, -cols
			if !exact && !sp.singleDash {
				// A multi-letter single-dash option with its value attached: -TTcmd.
				if o, n := sp.longestShortPrefix(s); o != nil && o.arity != flagOpt {
					p.occ = append(p.occ, occurrence{opt: o, id: o.names[0], text: s, value: arg{s: s[n:], known: true}, has: true})
					continue
				}
			}
		}
		if exact || strings.HasPrefix(s, "--") || (sp != nil && sp.singleDash) {
			name, val, hasEq := strings.Cut(s, "=")
			o := sp.lookupLong(name)
			if o == nil && sp != nil && sp.singleDash {
				if strings.HasPrefix(name, "--") {
					o = sp.lookupLong(name[1:]) // go accepts --flag for -flag
				}
			}
			occ := occurrence{opt: o, id: name, text: s}
			if o != nil {
				occ.id = o.names[0]
			}
			switch {
			case hasEq:
				occ.value, occ.has = arg{s: val, known: true}, true
			case o != nil && o.arity == valueOpt && i+1 < len(argv):
				i++
				occ.value, occ.has = argv[i], true
			case o != nil && o.arity == pairOpt && i+2 < len(argv):
				i += 2
				occ.value, occ.has = argv[i], true
			case o != nil && o.arity == pairOpt:
				i = len(argv) // a pair cut short: the program refuses it
			}
			p.occ = append(p.occ, occ)
			if o != nil && o.stop {
				endOpts = true
			}
			continue
		}
		// A cluster of short options: -rf, -xzf FILE, -I'cmd'.
		for j := 1; j < len(s); j++ {
			name := shortOption(s, j)
			o := sp.lookup(name)
			occ := occurrence{opt: o, id: name, text: s}
			if o == nil {
				p.occ = append(p.occ, occ)
				continue
			}
			occ.id = o.names[0]
			if o.arity != flagOpt {
				if j+1 < len(s) {
					occ.value, occ.has = arg{s: s[j+1:], known: true}, true
				} else if o.arity == valueOpt && i+1 < len(argv) {
					i++
					occ.value, occ.has = argv[i], true
				} else if o.arity == pairOpt && i+2 < len(argv) {
					i += 2
					occ.value, occ.has = argv[i], true
				}
				p.occ = append(p.occ, occ)
				endOpts = endOpts || o.stop
				break
			}
			p.occ = append(p.occ, occ)
		}
	}
}

// shortNames spells the short option of each printable ASCII letter, two
// bytes each from '!': shortOption slices it instead of allocating.
const shortNames = "-!-\"-#-$-%-&-'-(-)-*-+-,---.-/-0-1-2-3-4-5-6-7-8-9-:-;-<-=->-?-@" +
	"-A-B-C-D-E-F-G-H-I-J-K-L-M-N-O-P-Q-R-S-T-U-V-W-X-Y-Z-[-\\-]-^-_-`" +
	"-a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z-{-|-}-~"

// shortOption is "-" followed by the byte s[j] of a cluster of short
// options (-rf: "-r", "-f").
func shortOption(s string, j int) string {
	switch b := s[j]; {
	case j == 1 && s[0] == '-':
		return s[:2]
	case b >= '!' && b <= '~':
		i := 2 * int(b-'!')
		return shortNames[i : i+2]
	default:
		return "-" + s[j:j+1]
	}
}

// stopsAtOperand reports whether the first operand ends the options
// (subcommands, wrapped commands, POSIX option parsing).
func (sp *spec) stopsAtOperand() bool {
	return sp.posixStop || sp.wrapper || sp.subs != nil || sp.defSub != nil || sp.subDanger != nil
}

// afterOperand handles the first operand of a spec with subcommands or a
// wrapped command; it reports whether the rest of argv was consumed.
func (p *parsed) afterOperand(sp *spec, argv []arg, i, base int) bool {
	a := argv[i]
	if sp.wrapper {
		// The first skip operands are the wrapper's own; then the command.
		p.pos = p.pos[:len(p.pos)-1]
		p.posIdx = p.posIdx[:len(p.posIdx)-1]
		start := i + sp.skip
		for k := i; k < start && k < len(argv); k++ {
			p.addPos(argv[k], base+k)
		}
		if start < len(argv) {
			p.rest = argv[start:]
		}
		return true
	}
	if sp.subs == nil && sp.defSub == nil && sp.subDanger == nil {
		return false
	}
	if !a.known {
		p.dynamicSub = true
		return false
	}
	name := a.s
	if alias, ok := sp.aliases[name]; ok {
		name = alias
	} else if sp.abbrev {
		name = sp.expandAbbrev(name)
	}
	if name != a.s && len(p.pos) > 0 && p.pos[len(p.pos)-1].s == a.s {
		// Entries match the subcommand by the name it resolves to (npm
		// innit is init, git send-pack is push).
		p.pos[len(p.pos)-1].s = name
	}
	sub := sp.subs[name]
	if sub == nil {
		sub = sp.defSub
	}
	p.subPath = append(p.subPath, name)
	if sub == nil {
		return false
	}
	p.leaf = sub
	p.parse(sub, argv[i+1:], base+i+1)
	return true
}

// addPos records an operand.
func (p *parsed) addPos(a arg, idx int) {
	p.pos = append(p.pos, a)
	p.posIdx = append(p.posIdx, idx)
}

// expandAbbrev resolves an abbreviated subcommand or alias: an exact name
// stays; a prefix of dangerous subcommands becomes the first of them
// (failing closed), else the one subcommand it abbreviates.
func (sp *spec) expandAbbrev(name string) string {
	if _, ok := sp.subs[name]; ok {
		return name
	}
	if _, ok := sp.subDanger[name]; ok {
		return name
	}
	var danger, found []string
	consider := func(n, target string) {
		if !strings.HasPrefix(n, name) {
			return
		}
		if sp.subDanger[target] != "" {
			danger = append(danger, target)
		} else if !slices.Contains(found, target) {
			found = append(found, target)
		}
	}
	for n := range sp.subDanger {
		consider(n, n)
	}
	for n := range sp.subs {
		consider(n, n)
	}
	for n, target := range sp.aliases {
		consider(n, target)
	}
	if len(danger) > 0 {
		sort.Strings(danger)
		return danger[0]
	}
	if len(found) == 1 {
		return found[0]
	}
	return name
}

// longestShortPrefix finds a multi-letter single-dash option (zip's -TT)
// that starts s, and its length.
func (sp *spec) longestShortPrefix(s string) (*option, int) {
	var best *option
	n := 0
	if sp.index == nil {
		return nil, 0
	}
	ix := sp.index()
	for _, name := range ix.multi {
		if strings.HasPrefix(s, name) && len(name) > n {
			best, n = ix.byName[name], len(name)
		}
	}
	return best, n
}

// operands returns the operands after the subcommand words.
func (p *parsed) operands() []arg {
	pos := p.pos
	if len(p.subPath) > 0 && len(pos) >= len(p.subPath) {
		pos = pos[len(p.subPath):]
	}
	return pos
}
