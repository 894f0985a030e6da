package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// safeArith reports whether a variable's known value is plain arithmetic:
// bash evaluates variables recursively in arithmetic, and array subscripts
// in their values run command substitutions ($((x)) with x='a[$(cmd)]').
func safeArith(v string) bool {
	return !strings.ContainsAny(v, "[]$`")
}

// arithVars checks the variables an arithmetic expression reads, and
// records the variables it assigns: they hold numbers afterwards.
func (c *checker) arithVars(x syntax.ArithmExpr, st *shellState) {
	c.arithWalk(x, st, false)
}

// arithWalk is arithVars; cond says that x may not be evaluated (the right
// side of && and ||, a branch of ?:, a loop's step), so a variable it
// assigns may keep its old value.
func (c *checker) arithWalk(x syntax.ArithmExpr, st *shellState, cond bool) {
	switch n := x.(type) {
	case nil:
	case *syntax.BinaryArithm:
		if name := assignedIdent(n); name != "" {
			if n.Op != syntax.Assgn {
				c.arithRead(name, st) // x += 1 reads x
			}
			c.arithWalk(n.Y, st, cond)
			c.arithAssigned(name, st, cond)
			return
		}
		c.arithWalk(n.X, st, cond)
		switch n.Op {
		case syntax.AndArit, syntax.OrArit, syntax.TernQuest:
			c.arithWalk(n.Y, st, true)
		default:
			c.arithWalk(n.Y, st, cond)
		}
	case *syntax.UnaryArithm:
		if w, ok := n.X.(*syntax.Word); ok && (n.Op == syntax.Inc || n.Op == syntax.Dec) && arithIdent(w) != "" {
			c.arithRead(arithIdent(w), st) // x++ evaluates x's value
			c.arithAssigned(arithIdent(w), st, cond)
			return
		}
		c.arithWalk(n.X, st, cond)
	case *syntax.ParenArithm:
		c.arithWalk(n.X, st, cond)
	case *syntax.Word:
		if name := arithIdent(n); name != "" {
			c.arithRead(name, st)
		}
		if !shortParts(n.Parts) {
			c.arithText(n, st, cond)
			return
		}
		for _, p := range n.Parts {
			if pe, ok := p.(*syntax.ParamExp); ok && pe.Param != nil {
				c.arithRead(pe.Param.Value, st)
			}
		}
	}
}

// shortParts reports whether an arithmetic operand is made of plain text
// and $name expansions only, which arithWalk reads one by one.
func shortParts(parts []syntax.WordPart) bool {
	for _, p := range parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.ParamExp:
		default:
			return false
		}
	}
	return true
}

// maxArithText bounds how many times the text of an operand is evaluated
// again (x holding "$x" in quotes would never end).
const maxArithText = 8

// arithText checks an arithmetic operand with quotes or substitutions in
// it (let 'a[$(cmd)]', (( "$x" )), $(( $(cat f) ))): bash expands it and
// evaluates the resulting text as arithmetic, where an array subscript
// runs command substitutions. Known text is checked as the arithmetic it
// is; text known only at run time must be made of numbers.
func (c *checker) arithText(w *syntax.Word, st *shellState, cond bool) {
	if v, ok := c.literal(w, st); ok {
		c.arithString(v, st, cond)
		return
	}
	c.arithParts(w.Parts, st)
}

// arithString checks text that bash evaluates as arithmetic (an operand's
// expanded text, the words of let run through builtin or command).
func (c *checker) arithString(v string, st *shellState, cond bool) {
	if c.arithDepth >= maxArithText {
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: "arithmetic",
			Message: "arithmetic text that expands to more arithmetic text, deeper than the checker follows"})
		return
	}
	x, err := newParser().Arithmetic(strings.NewReader(v))
	if err != nil {
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: clip(v),
			Message: "arithmetic text that cannot be parsed: " + err.Error()})
		return
	}
	c.arithDepth++
	defer func() { c.arithDepth-- }()
	c.arithm(x, st, cond)
}

// arithParts checks the parts of an arithmetic operand known only at run
// time: variables must hold numbers, substitutions must print one, and
// names in its text are variables read.
func (c *checker) arithParts(parts []syntax.WordPart, st *shellState) {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.DblQuoted:
			c.arithParts(p.Parts, st)
		case *syntax.Lit:
			c.arithNames(p.Value, st)
		case *syntax.SglQuoted:
			c.arithNames(p.Value, st)
		case *syntax.ParamExp:
			if p.Param == nil || p.Excl || p.Names != 0 {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: "arithmetic",
					Message: "arithmetic on an expansion known only at run time can run commands in bash (array subscripts are evaluated)"})
				continue
			}
			if !p.Length {
				c.arithRead(p.Param.Value, st)
			}
		case *syntax.ArithmExp:
			// Its value is a number.
		case *syntax.CmdSubst:
			if !printsCount(p, st) {
				c.add(Violation{Reason: ReasonDynamicCommand, Resource: "$(( $(…) ))",
					Message: "arithmetic on a command's output can run commands in bash (array subscripts in it are evaluated); only counts (wc, nproc, git rev-list --count) are taken as numbers"})
			}
		default:
			c.add(Violation{Reason: ReasonDynamicCommand, Resource: "arithmetic",
				Message: "arithmetic on text known only at run time can run commands in bash (array subscripts are evaluated)"})
		}
	}
}

// arithNames records the variables that names in arithmetic text read.
func (c *checker) arithNames(s string, st *shellState) {
	for i := 0; i < len(s); {
		if !isNameStart(s[i]) || i > 0 && isNameByte(s[i-1]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isNameByte(s[j]) {
			j++
		}
		c.arithRead(s[i:j], st)
		i = j
	}
}

// isNameStart and isNameByte classify the bytes of a variable name.
func isNameStart(b byte) bool { return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
func isNameByte(b byte) bool  { return isNameStart(b) || b >= '0' && b <= '9' }

// assignedIdent is the variable an assignment operator (=, +=, …) sets
// when it is a plain name, else "".
func assignedIdent(n *syntax.BinaryArithm) string {
	switch n.Op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
		if w, ok := n.X.(*syntax.Word); ok {
			return arithIdent(w)
		}
	}
	return ""
}

// arithAssigned records that arithmetic assigned a number to name; when the
// assignment may not run (cond), the variable holds a number only if its
// old value was a safe one.
func (c *checker) arithAssigned(name string, st *shellState, cond bool) {
	c.addAll(c.s.envAssign(name, nil, st.cwd, c.env)) // ((PATH=1)) sets PATH like PATH=1
	old, known := c.varValue(name, st)
	if !cond || st.numeric[name] || known && safeArith(old) {
		st.setNumeric(name)
	}
	st.setVar(name, nil)
}

// arithRead records that an arithmetic expression reads a variable, whose
// subscript bash evaluates.
func (c *checker) arithRead(name string, st *shellState) {
	if st.numeric[name] {
		return
	}
	if v, ok := c.varValue(name, st); ok && safeArith(v) {
		return
	}
	c.add(Violation{Reason: ReasonDynamicCommand, Resource: "$((" + name + "))",
		Message: "arithmetic on " + name + ", whose value is known only at run time, can run commands in bash (array subscripts are evaluated); assign it a number first"})
}

// arithIdent returns the variable name a bare arithmetic operand reads.
func arithIdent(w *syntax.Word) string {
	if len(w.Parts) != 1 {
		return ""
	}
	lit, ok := w.Parts[0].(*syntax.Lit)
	if !ok || lit.Value == "" {
		return ""
	}
	v := lit.Value
	if v[0] >= '0' && v[0] <= '9' {
		return ""
	}
	for _, r := range v {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return ""
		}
	}
	return v
}

// paramOps refuses parameter expansions bash evaluates as code: ${x@P}
// (prompt expansion runs substitutions), ${!x} of a value that is not a
// plain name (an array subscript is evaluated), and assigns the variable
// of ${x:=v} like an assignment.
func (c *checker) paramOps(pe *syntax.ParamExp, st *shellState) {
	if pe.Param == nil {
		return
	}
	name := pe.Param.Value
	if pe.Exp != nil && pe.Exp.Op == syntax.OtherParamOps && pe.Exp.Word != nil && strings.Contains(pe.Exp.Word.Lit(), "P") {
		c.add(Violation{Reason: ReasonDynamicCommand, Resource: "${" + name + "@P}",
			Message: "${" + name + "@P} expands the value as a prompt, which runs command substitutions"})
	}
	if pe.Excl && pe.Names == 0 {
		v, ok := c.varValue(name, st)
		if !ok || !isName(v) {
			c.add(Violation{Reason: ReasonDynamicCommand, Resource: "${!" + name + "}",
				Message: "${!" + name + "} refers to a variable named at run time, whose subscript bash would evaluate"})
		}
	}
	if pe.Exp != nil && (pe.Exp.Op == syntax.AssignUnset || pe.Exp.Op == syntax.AssignUnsetOrNull) {
		var val *string
		if pe.Exp.Word != nil {
			if v, ok := c.literal(pe.Exp.Word, st); ok {
				val = &v
			}
		}
		c.addAll(c.s.envAssign(name, val, st.cwd, c.env))
		if _, known := c.varValue(name, st); !known {
			st.setVar(name, nil)
		}
	}
	if pe.Index != nil {
		c.arithVars(pe.Index, st)
	}
	if pe.Slice != nil {
		// ${x:offset:length}: both are arithmetic.
		c.arithVars(pe.Slice.Offset, st)
		c.arithVars(pe.Slice.Length, st)
	}
}

// isName reports whether s is a shell variable name.
func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
