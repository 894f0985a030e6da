package policy

import "testing"

// groupOf names, for every program a register function adds, that
// function's group: a program missing from it would be unknown to
// decisions.
func TestProgramGroups(t *testing.T) {
	seen := map[string]int{}
	for g := 0; g < numGroups; g++ {
		registerGroup(g, func(_ *spec, names ...string) {
			for _, n := range names {
				if prev, dup := seen[n]; dup {
					t.Errorf("%s is added by groups %d and %d", n, prev, g)
				}
				seen[n] = g
				if got, ok := groupOf(n); !ok || got != g {
					t.Errorf("groupOf(%q) = %d, %v; its row is in group %d", n, got, ok, g)
				}
			}
		})
	}
	if len(seen) < 150 {
		t.Fatalf("only %d programs registered", len(seen))
	}
	table := &programs{}
	for n := range seen {
		if table.lookup(n) == nil {
			t.Errorf("lookup(%q) = nil", n)
		}
	}
	if table.lookup("python3.12") != table.lookup("python3") || table.lookup("no-such-program") != nil {
		t.Error("versioned or unknown names")
	}
}
