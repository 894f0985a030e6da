package roam

import (
	"fmt"
	"strings"
	"testing"
)

func BenchmarkParseHeader(b *testing.B) {
	src := render("5b9a2a6c-7d1e-4f0a-9c3b-2e8f1d4a6b7c", "A title", []string{"a", "b", "c"}) +
		strings.Repeat("Some body text with [[id:x][a link]].\n", 200) + "* Heading\n" + strings.Repeat("more\n", 1000)
	b.ReportAllocs()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := parseHeader(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead looks up the last of 500 nodes, the worst case of the scan.
func BenchmarkRead(b *testing.B) {
	s := &Store{Dir: b.TempDir()}
	var last Node
	for i := range 500 {
		n, err := s.Create(b.Context(), fmt.Sprintf("Node %d", i), fmt.Sprintf("d%d", i%10), []string{"t"})
		if err != nil {
			b.Fatal(err)
		}
		if strings.HasPrefix(n.File, "d9/") {
			last = n
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Read(b.Context(), last.ID); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAddTags(b *testing.B) {
	s := &Store{Dir: b.TempDir()}
	n, err := s.Create(b.Context(), "Tagged", "", []string{"a"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.AddTags(b.Context(), n.ID, []string{"a", "b"}); err != nil {
			b.Fatal(err)
		}
	}
}
