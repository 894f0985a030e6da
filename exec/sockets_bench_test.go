package exec

import "testing"

// BenchmarkSocketView measures what the host sockets add to each call's
// view on the gateway's side: the named sockets, the fresh directories,
// /etc's links, /proc/net/unix and a stat per listed socket.
func BenchmarkSocketView(b *testing.B) {
	r := newRunner(b, Options{ReadRoots: []string{"/"}, WriteRoots: []string{realDir(b)}, Network: sockScope{netScope{mode: "none"}, []string{"/run/docker.sock"}}})
	b.ReportAllocs()
	for b.Loop() {
		if err := r.socketView(&view{}); err != nil {
			b.Fatal(err)
		}
	}
}
