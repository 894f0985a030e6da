package policy

import "strings"

// find: an expression language over a tree.
//
// findutils' manual: -exec, -execdir, -ok and -okdir "execute command";
// -fprint, -fprintf and -fls write files; -files0-from reads the starting
// points from a file. -delete removes what it matches (GTFOBins: find,
// "Shell"). -L and -follow follow symbolic links. The checker walks the
// starting points, then the expression, and checks each action.

// registerFind adds the table rows of this file.
func registerFind(add adder) {
	add(&spec{operands: opNone, singleDash: true, extra: findExtra, runsOrWrites: true}, "find")
}

// findExtra walks a find command line: starting points, then the expression.
func findExtra(c *checker, p *parsed, allowed allowEntries, st *shellState) {
	args := p.args
	i := 0
	// Options before the starting points.
	for i < len(args) && args[i].known && (args[i].s == "-H" || args[i].s == "-L" || args[i].s == "-P" || strings.HasPrefix(args[i].s, "-O") || args[i].s == "-D" || args[i].s == "--") {
		if args[i].s == "-D" {
			i++
		}
		i++
	}
	for ; i < len(args); i++ {
		a := args[i]
		if a.known && (strings.HasPrefix(a.s, "-") || a.s == "(" || a.s == "!" || a.s == ")" || a.s == ",") {
			break
		}
		if a.known {
			c.operand(a.s, AccessRead, st.cwd, "find starting point")
		}
	}
	oneArg := map[string]effect{
		"-name": effNone, "-iname": effNone, "-path": effNone, "-ipath": effNone, "-wholename": effNone, "-iwholename": effNone,
		"-regex": effNone, "-iregex": effNone, "-regextype": effNone, "-type": effNone, "-xtype": effNone, "-size": effNone,
		"-mtime": effNone, "-mmin": effNone, "-atime": effNone, "-amin": effNone, "-ctime": effNone, "-cmin": effNone,
		"-user": effNone, "-group": effNone, "-uid": effNone, "-gid": effNone, "-perm": effNone, "-maxdepth": effNone,
		"-mindepth": effNone, "-links": effNone, "-inum": effNone, "-lname": effNone, "-ilname": effNone, "-used": effNone,
		"-fstype": effNone, "-context": effNone, "-printf": effNone, "-newer": effRead, "-anewer": effRead, "-cnewer": effRead,
		"-samefile": effRead, "-files0-from": effRead, "-fprint": effWrite, "-fprint0": effWrite, "-fls": effWrite,
	}
	for ; i < len(args); i++ {
		a := args[i]
		if !a.known {
			continue
		}
		switch {
		case a.s == "-exec" || a.s == "-execdir" || a.s == "-ok" || a.s == "-okdir":
			c.danger(p, allowed, a.s, a.s, "runs a command for every file found")
			j := i + 1
			for j < len(args) && !(args[j].known && (args[j].s == ";" || args[j].s == "+")) {
				j++
			}
			inner := make([]arg, 0, j-i-1)
			for _, x := range args[i+1 : j] {
				if x.known && strings.Contains(x.s, "{}") {
					x = arg{}
				}
				inner = append(inner, x)
			}
			c.simple(inner, st.clone(forSubshell), false)
			i = j
		case a.s == "-delete":
			c.danger(p, allowed, "-delete", "-delete", "deletes every file found")
		case a.s == "-fprintf":
			if i+1 < len(args) && args[i+1].known {
				c.operand(args[i+1].s, AccessWrite, st.cwd, "find -fprintf")
			}
			i += 2
		case strings.HasPrefix(a.s, "-newer") && len(a.s) == 8:
			if i+1 < len(args) && args[i+1].known {
				c.operand(args[i+1].s, AccessRead, st.cwd, "find "+a.s)
			}
			i++
		default:
			if eff, ok := oneArg[a.s]; ok {
				if i+1 < len(args) && args[i+1].known {
					switch eff {
					case effRead:
						c.operand(args[i+1].s, AccessRead, st.cwd, "find "+a.s)
					case effWrite:
						c.operand(args[i+1].s, AccessWrite, st.cwd, "find "+a.s)
					}
				}
				i++
			}
		}
	}
}
