package orgcheck

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRequire(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []Headline
	}{
		{"empty", "", nil},
		{"two entries", "* ALLOWED one\n:PROPERTIES:\n:DECISION: allowed\n:END:\n** Sub\n* DENIED two\n:PROPERTIES:\n:DECISION: denied\n:END:\n",
			[]Headline{{1, "ALLOWED one", "allowed"}, {1, "DENIED two", "denied"}}},
		{"unescaped heading in block is a heading", "* A\n#+begin_example\n* fake\n#+end_example\n",
			[]Headline{{1, "A", ""}, {1, "fake", ""}}},
		{"escaped heading in block is not", "* A\n#+begin_example\n,* fake\n#+end_example\n",
			[]Headline{{1, "A", ""}}},
		{"utf-8 title", "* été ✓\n", []Headline{{1, "été ✓", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.org")
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got := Require(t, path)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d headlines %+v, want %+v", len(got), got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("headline %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestParseOutputNeedsSummary(t *testing.T) {
	if _, err := parseOutput([]byte("H\t1\t\t\n")); err == nil {
		t.Fatal("output without the summary line accepted")
	}
}
