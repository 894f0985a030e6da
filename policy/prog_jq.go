package policy

// jq, yq, gojq: JSON processors. The filter is the first operand unless -f
// names a file holding it.

// registerJQ adds the table rows of this file.
func registerJQ(add adder) {
	add(&spec{operands: opPatternFirst, opts: opts(patFile("-f --from-file"), val("--arg"), val("--argjson"), val("--slurpfile"),
		val("--rawfile"), rd("-L"), val("--indent"))}, "jq", "yq", "gojq")
}
