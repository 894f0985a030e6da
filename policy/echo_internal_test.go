package policy

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// echoCases are texts whose echo -e expansion is compared with bash's.
var echoCases = []string{
	`\x2eenv`, `\0056env`, `\056env`, `\101`, `\0101`, `\1012`, `\u002eenv`, `\U0001F600`,
	`.env\cjunk`, `\q\x\xZ`, `a\tb\nc`, `\\`, `tail\`, `\e[0m`, `\x4`, `\08`, `\0`,
}

// TestEchoEscapesBash checks echoEscapes against bash's echo -e.
func TestEchoEscapesBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bash is needed to compare echo -e")
		}
		t.Skip("bash not installed")
	}
	for _, in := range echoCases {
		out, err := exec.Command(bash, "-c", `echo -ne "$1"`, "sh", in).Output()
		if err != nil {
			t.Fatalf("bash echo -ne %q: %v", in, err)
		}
		got, stop := echoEscapes(in)
		if got != string(out) {
			t.Errorf("echoEscapes(%q) = %q, bash prints %q", in, got, out)
		}
		if want := strings.Contains(in, `\c`); stop != want {
			t.Errorf("echoEscapes(%q) stop = %v, want %v", in, stop, want)
		}
	}
}

// FuzzEchoEscapes checks that echoEscapes never panics and leaves text
// without a backslash as it is.
func FuzzEchoEscapes(f *testing.F) {
	for _, s := range echoCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, stop := echoEscapes(s)
		if !strings.Contains(s, `\`) && (got != s || stop) {
			t.Errorf("echoEscapes(%q) = %q, %v; want the text unchanged", s, got, stop)
		}
	})
}
