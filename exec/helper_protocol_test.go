package exec

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// protocolFile is where every constant and message of the helper protocol
// lives.
const protocolFile = "helper_protocol.go"

// protocolName matches the names the protocol's constants take: its
// descriptors (…FD), message bytes (…Byte), exit statuses (…ExitCode),
// hidden arguments (…Arg), the listeners of a proxy view and their ports
// (…Listener, …Port, nsListenerCount) and the bound on forwarded ports.
var protocolName = regexp.MustCompile(`(FD|Byte|ExitCode|Arg|Listener|Port)$|^nsListenerCount$|^maxForwards$`)

// TestProtocolInOneFile keeps the helper protocol in helper_protocol.go:
// a constant named as one of the protocol's, or written as a character
// (a message byte), declared in another file of the package fails it; and
// so does an unexported package constant that helper_protocol.go uses but
// another file declares.
func TestProtocolInOneFile(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	declaredIn := map[string]string{} // constant → file
	var protocol *ast.File
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if name == protocolFile {
			protocol = f
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				char := false
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.CHAR {
						char = true
					}
				}
				for _, n := range vs.Names {
					declaredIn[n.Name] = name
					if name != protocolFile && (protocolName.MatchString(n.Name) || char) {
						t.Errorf("%s declares %s, a constant of the helper protocol: declare it in %s", fset.Position(n.Pos()), n.Name, protocolFile)
					}
				}
			}
		}
	}
	if protocol == nil {
		t.Fatalf("no %s", protocolFile)
	}
	ast.Inspect(protocol, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || ast.IsExported(id.Name) {
			return true
		}
		if file, ok := declaredIn[id.Name]; ok && file != protocolFile {
			t.Errorf("%s uses %s, declared in %s: a constant the protocol uses is the protocol's", fset.Position(id.Pos()), id.Name, file)
		}
		return true
	})
}

// TestParseHelperArgsPathLists: a relative path in any list of paths the
// rules carry, the view's included, makes the helper refuse its rules. A
// list added to rules or view without being checked fails it.
func TestParseHelperArgsPathLists(t *testing.T) {
	parse := func(rl rules) error {
		b, err := json.Marshal(rl)
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, err = parseHelperArgs([]string{"scopegate", helperArg, string(b), "--", "/bin/true"})
		return err
	}
	if err := parse(rules{ABI: 1, RW: []string{"/a"}, View: &view{Bind: []string{"/b"}}}); err != nil {
		t.Fatalf("absolute paths refused: %v", err)
	}
	lists := 0
	for _, target := range []any{&rules{}, &view{}} {
		typ := reflect.TypeOf(target).Elem()
		for i := range typ.NumField() {
			fld := typ.Field(i)
			tag, _, _ := strings.Cut(fld.Tag.Get("json"), ",")
			if !fld.IsExported() || tag == "-" {
				continue
			}
			var bad reflect.Value
			switch fld.Type {
			case reflect.TypeOf([]string(nil)):
				bad = reflect.ValueOf([]string{"/ok", "relative/path"})
			case reflect.TypeOf([]viewLink(nil)):
				bad = reflect.ValueOf([]viewLink{{Path: "relative", Target: "/t"}})
			default:
				continue
			}
			lists++
			t.Run(typ.Name()+"."+fld.Name, func(t *testing.T) {
				rl := rules{ABI: 1, View: &view{}}
				if typ == reflect.TypeOf(rules{}) {
					reflect.ValueOf(&rl).Elem().Field(i).Set(bad)
				} else {
					reflect.ValueOf(rl.View).Elem().Field(i).Set(bad)
				}
				if err := parse(rl); err == nil || !strings.Contains(err.Error(), "not absolute") {
					t.Errorf("a relative path in %s.%s: %v", typ.Name(), fld.Name, err)
				}
			})
		}
	}
	if lists < 10 {
		t.Fatalf("found %d lists of paths in rules and view", lists)
	}
}

// TestDecodeMasks: the masks on masksFD are absolute paths, each ended by
// a NUL; anything else is refused.
func TestDecodeMasks(t *testing.T) {
	got, err := decodeMasks([]byte("/a\x00/b c\x00"))
	if err != nil || len(got) != 2 || got[0] != "/a" || got[1] != "/b c" {
		t.Fatalf("decodeMasks = %q, %v", got, err)
	}
	for _, bad := range []string{"/a", "/a\x00rel\x00", "\x00"} {
		if got, err := decodeMasks([]byte(bad)); err == nil {
			t.Errorf("decodeMasks(%q) = %q, want an error", bad, got)
		}
	}
}
