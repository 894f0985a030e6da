package policy

import (
	"reflect"
	"testing"
)

// Within makes a scope of every field of the scope it bounds: a field
// added to Scope and not copied there fails this test.
func TestWithinCopiesEveryField(t *testing.T) {
	sc, err := Compile(Document{
		Paths:   PathRules{Read: []string{"/srv/**"}, Write: []string{"/srv/w/**"}, Deny: []string{"**/.env"}},
		Shell:   ShellRules{Allow: []string{"ls"}, Deny: []string{"rm -rf"}},
		OrgRoam: RoamRules{Tags: []string{"t"}},
		Network: NetworkRules{Mode: NetworkAny},
	}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := CompileManaged(ManagedRules{Paths: ManagedPaths{Deny: []string{"**/x"}}}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	w := reflect.ValueOf(sc.Within(m)).Elem()
	own := reflect.ValueOf(sc).Elem()
	for i := range w.NumField() {
		name := w.Type().Field(i).Name
		if name == "parsers" {
			continue
		}
		if !own.Field(i).IsZero() && w.Field(i).IsZero() {
			t.Errorf("Within does not copy Scope.%s", name)
		}
	}
}
