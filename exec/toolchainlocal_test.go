package exec

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// TestShellLocalBinShowsNoDataHome puts ~/.local/bin, composer's
// ~/.config/composer/vendor/bin and ~/go/bin on the trusted PATH of a
// scope reading the whole system: the view shows the programs there, not
// the rest of ~/.local, whose share directory is the user's data
// (mkcert's CA key, a container volume's .env), nor the rest of
// ~/.config, nor GOPATH's checkouts of other projects, nor the other
// projects beside a tool kept in ~/code, all masked only two levels deep.
func TestShellLocalBinShowsNoDataHome(t *testing.T) {
	requireNamespaces(t)
	proj := viewFixture(t)
	home := homeOutsideTmp(t)
	bin := filepath.Join(home, ".local", "bin")
	writeFile(t, filepath.Join(bin, "mytool"), "#!/bin/sh\necho tool ran\n", 0o755)
	key := filepath.Join(home, ".local", "share", "mkcert", "rootCA-key.pem")
	vol := filepath.Join(home, ".local", "share", "containers", "storage", "volumes", "db", "_data", ".env")
	writeFile(t, key, canary+"\n", 0o600)
	writeFile(t, vol, "TOKEN="+canary+"\n", 0o600)
	// composer's global programs, below the user's settings.
	composer := filepath.Join(home, ".config", "composer", "vendor", "bin")
	writeFile(t, filepath.Join(composer, "phptool"), "#!/bin/sh\necho php ran\n", 0o755)
	token := filepath.Join(home, ".config", "app", "profiles", "work", ".env")
	writeFile(t, token, "TOKEN="+canary+"\n", 0o600)
	// Go's programs, beside GOPATH's checkouts of other projects.
	gobin := filepath.Join(home, "go", "bin")
	writeFile(t, filepath.Join(gobin, "gotool"), "#!/bin/sh\necho go ran\n", 0o755)
	checkout := filepath.Join(home, "go", "src", "github.com", "me", "api", ".env")
	writeFile(t, checkout, "TOKEN="+canary+"\n", 0o600)
	// A tool kept beside the user's projects, its bin directory on PATH.
	codebin := filepath.Join(home, "code", "tools", "bin")
	writeFile(t, filepath.Join(codebin, "codetool"), "#!/bin/sh\necho code ran\n", 0o755)
	other := filepath.Join(home, "code", "other", "sub", ".env")
	writeFile(t, other, "TOKEN="+canary+"\n", 0o600)
	r := newRunner(t, Options{Checker: pathChecker{checker{}, append([]string{bin, composer, gobin, codebin}, checker{}.TrustedPath()...)},
		ReadRoots: []string{"/"}, WriteRoots: []string{proj}, Home: home, Deny: []string{"**/.env", "**/*.pem"}})
	res, err := run(t, r, policy.ToolShell, shellArgs("mytool; phptool; gotool; codetool; /bin/sh -c 'cat "+key+" "+vol+" "+token+" "+checkout+" "+other+"'"), proj)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "tool ran") || !strings.Contains(res.Stdout, "php ran") || !strings.Contains(res.Stdout, "go ran") || !strings.Contains(res.Stdout, "code ran") {
		t.Errorf("a program below the home directory did not run: %+v", res)
	}
	if out := res.Stdout + res.Stderr; strings.Contains(out, canary) {
		t.Errorf("a denied file beside a program's directory was read:\n%s", out)
	}
}
