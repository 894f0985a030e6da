package learn_test

import (
	"fmt"
	"testing"

	"github.com/scopegate/scopegate/learn"
	"github.com/scopegate/scopegate/policy"
)

// BenchmarkSuggest turns 1,000 observed calls (reads below 50 directories,
// writes, commands) into a suggestion.
func BenchmarkSuggest(b *testing.B) {
	var calls []learn.Call
	for i := range 1000 {
		calls = append(calls, learn.Call{ID: fmt.Sprintf("c%d", i), Widen: []policy.Widening{
			{Flag: "--read", Value: fmt.Sprintf("/srv/data/d%d/f%d.txt", i%50, i)},
			{Flag: "--write", Value: fmt.Sprintf("/home/u/proj/out/o%d", i%7)},
			{Flag: "--allow-command", Value: fmt.Sprintf("tool%d sub", i%9)},
		}})
	}
	o := opts()
	b.ReportAllocs()
	for b.Loop() {
		if sugs, _ := learn.Suggest(calls, o); len(sugs) == 0 {
			b.Fatal("no suggestion")
		}
	}
}
