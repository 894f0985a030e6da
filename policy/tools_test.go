package policy_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/scopegate/scopegate/policy"
)

// The table and the decoded args types must say the same: every argument
// of a spec is a JSON field of the args type and back, with the same type.
func TestToolSpecsMatchArgsTypes(t *testing.T) {
	types := map[string]any{
		policy.ToolReadFile: policy.ReadFileArgs{}, policy.ToolWriteFile: policy.WriteFileArgs{},
		policy.ToolEditFile: policy.EditFileArgs{}, policy.ToolListDir: policy.ListDirArgs{},
		policy.ToolGlob: policy.GlobArgs{}, policy.ToolGrep: policy.GrepArgs{}, policy.ToolShell: policy.ShellArgs{},
		policy.ToolRoamCreateNode: policy.RoamCreateNodeArgs{}, policy.ToolRoamReadNode: policy.RoamReadNodeArgs{},
		policy.ToolRoamAddTags: policy.RoamAddTagsArgs{}, policy.ToolRoamLinkNodes: policy.RoamLinkNodesArgs{},
	}
	var names []string
	for _, spec := range policy.ToolSpecs() {
		names = append(names, spec.Name)
		v, ok := types[spec.Name]
		if !ok {
			t.Errorf("%s: no args type", spec.Name)
			continue
		}
		rt := reflect.TypeOf(v)
		fields := map[string]reflect.Type{}
		for i := range rt.NumField() {
			tag := strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]
			ft := rt.Field(i).Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			fields[tag] = ft
		}
		if len(fields) != len(spec.Args) {
			t.Errorf("%s: %d args in the table, %d fields in %s", spec.Name, len(spec.Args), len(fields), rt.Name())
		}
		for _, a := range spec.Args {
			ft, ok := fields[a.Name]
			if !ok {
				t.Errorf("%s: table arg %q is not a field of %s", spec.Name, a.Name, rt.Name())
				continue
			}
			want := map[policy.ArgType]reflect.Kind{policy.ArgString: reflect.String, policy.ArgBoolean: reflect.Bool,
				policy.ArgStringList: reflect.Slice}[a.Type]
			if a.Type == policy.ArgInteger {
				if k := ft.Kind(); k != reflect.Int && k != reflect.Int64 {
					t.Errorf("%s.%s: table says integer, field is %s", spec.Name, a.Name, ft)
				}
			} else if ft.Kind() != want {
				t.Errorf("%s.%s: table says %s, field is %s", spec.Name, a.Name, a.Type, ft)
			}
		}
		if !spec.Hints.ReadOnly && !spec.Hints.Destructive && spec.Name != policy.ToolRoamCreateNode &&
			!strings.HasPrefix(spec.Name, "roam_") {
			t.Errorf("%s: neither read-only nor destructive", spec.Name)
		}
		if _, err := json.Marshal(spec.InputSchema()); err != nil {
			t.Errorf("%s: schema: %v", spec.Name, err)
		}
	}
	if !reflect.DeepEqual(names, policy.Tools()) {
		t.Errorf("ToolSpecs names %v, Tools() %v", names, policy.Tools())
	}
	for _, n := range names {
		if !policy.KnownTool(n) {
			t.Errorf("KnownTool(%q) = false", n)
		}
	}
}

func TestCheckArgs(t *testing.T) {
	tests := []struct {
		tool, args, want string // want: "" for valid, else a substring of the error
	}{
		{"read_file", `{"path":"a","offset":3}`, ""},
		{"read_file", `{"path":["a"]}`, `read_file argument "path": must be a string, got an array`},
		{"read_file", `{"path":"a","offset":1.5}`, `must be a whole number, got 1.5`},
		{"read_file", `{}`, `read_file needs argument "path" (its arguments: path, offset?, limit?)`},
		{"read_file", `[1]`, `args of read_file must be a JSON object, got an array`},
		{"write_file", `{"path":"a","content":""}`, ""},
		{"write_file", `{"path":"a"}`, `needs argument "content"`},
		{"shell", `{"command":"ls","netwrok":true}`, `shell has no argument "netwrok"`},
		{"roam_add_tags", `{"node_id":"x","tags":["a",1]}`, `must be an array of strings`},
		{"edit_file", `{"path":"a","old_string":"x","new_string":"y","replace_all":"yes"}`, `must be a boolean, got a string`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			spec, ok := policy.LookupTool(tt.tool)
			if !ok {
				t.Fatalf("no tool %s", tt.tool)
			}
			err := spec.CheckArgs(json.RawMessage(tt.args))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want valid", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "Go ") {
				t.Errorf("error names Go internals: %v", err)
			}
		})
	}
}

// Decisions on ill-typed args say what is wrong in the contract's words.
func TestDecodeArgsErrorsInContractWords(t *testing.T) {
	tests := []struct{ args, want string }{
		{`{"path":["a"]}`, `argument "path" must be a string, got an array`},
		{`{"path":"a","offset":"3"}`, `argument "offset" must be an integer, got a string`},
		{`{"path":"a","offset":1.5}`, `argument "offset" must be an integer, got the number 1.5`},
		{`{"path":"a","netwrok":1}`, `no argument "netwrok"`},
		{`[1,2]`, `args must be a JSON object, got an array`},
	}
	for _, tt := range tests {
		var a policy.ReadFileArgs
		err := policy.DecodeArgs(json.RawMessage(tt.args), &a)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want %q", tt.args, err, tt.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "policy.")) {
			t.Errorf("%s: error names Go internals: %v", tt.args, err)
		}
	}
}

// Patterns are cleaned when a scope is read: a doubled or trailing slash,
// as Emacs and projectile write them, means the clean pattern.
func TestPatternsCleanedOnLoad(t *testing.T) {
	doc, err := policy.ParseDocument([]byte("paths:\n  write: [\"/home/u/proj//**\", \"/srv/data/\"]\n  read: [\"//**\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Paths.Write; len(got) != 2 || got[0] != "/home/u/proj/**" || got[1] != "/srv/data" {
		t.Errorf("write %q", got)
	}
	if got := doc.Paths.Read; len(got) != 1 || got[0] != "/**" {
		t.Errorf("read %q", got)
	}
}

// A root with glob metacharacters is escaped as character classes, which
// stay valid when another tool rewrites the scope with double-quoted YAML
// scalars (where a backslash escape like \[ would be an invalid escape).
func TestEscapedRootSurvivesDoubleQuotedYAML(t *testing.T) {
	root := t.TempDir() + "/my[proj]{x}"
	pat := policy.EscapeGlob(root) + "/**"
	if strings.Contains(pat, `\`) {
		t.Fatalf("pattern %q holds a backslash", pat)
	}
	doc, err := policy.ParseDocument([]byte("paths:\n  write: [\"" + pat + "\"]\n"))
	if err != nil {
		t.Fatalf("double-quoted rewrite does not parse: %v", err)
	}
	sc, err := policy.Compile(doc, policy.Env{})
	if err != nil {
		t.Fatal(err)
	}
	call := func(path string) policy.Call {
		args, _ := json.Marshal(map[string]string{"path": path, "content": "x"})
		return policy.Call{Tool: policy.ToolWriteFile, Args: args, Cwd: "/"}
	}
	if d := sc.Decide(call(root+"/a.txt"), policy.Env{}); !d.Allowed {
		t.Errorf("write below the root: %s", d.Message)
	}
	if d := sc.Decide(call(t.TempDir()+"/myXproj}x}/a.txt"), policy.Env{}); d.Allowed {
		t.Error("a class matched another character")
	}
}
