package netproxy

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// chunkReader returns its data in reads of the sizes given, then io.EOF.
type chunkReader struct {
	data  []byte
	sizes []int
	reads []int // the buffer length of each read
}

func (r *chunkReader) Read(p []byte) (int, error) {
	r.reads = append(r.reads, len(p))
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(p)
	if len(r.sizes) > 0 {
		n = min(n, r.sizes[0])
		r.sizes = r.sizes[1:]
	}
	n = copy(p[:n], r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestRelayCopy(t *testing.T) {
	data := make([]byte, 5<<20+123)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	t.Run("small reads keep the small buffer", func(t *testing.T) {
		r := &chunkReader{data: data[:100<<10], sizes: []int{1000, 5000, 31 << 10, 1, 4096}}
		for range 100 {
			r.sizes = append(r.sizes, 1000)
		}
		var w bytes.Buffer
		n, err := relayCopy(&w, r)
		if err != nil || n != 100<<10 || !bytes.Equal(w.Bytes(), data[:100<<10]) {
			t.Fatalf("copied %d bytes, err %v, equal %v", n, err, bytes.Equal(w.Bytes(), data[:100<<10]))
		}
		for _, l := range r.reads {
			if l != minRelayBuf {
				t.Fatalf("a read of %d bytes: the buffer grew though no read filled it", l)
			}
		}
	})
	t.Run("a full read grows the buffer", func(t *testing.T) {
		r := &chunkReader{data: data}
		var w bytes.Buffer
		n, err := relayCopy(&w, r)
		if err != nil || n != int64(len(data)) || !bytes.Equal(w.Bytes(), data) {
			t.Fatalf("copied %d of %d bytes, err %v", n, len(data), err)
		}
		if r.reads[0] != minRelayBuf || r.reads[1] != maxRelayBuf {
			t.Fatalf("read sizes %v: want %d then %d", r.reads[:2], minRelayBuf, maxRelayBuf)
		}
	})
	t.Run("a failed write ends the copy", func(t *testing.T) {
		boom := errors.New("boom")
		n, err := relayCopy(failWriter{after: 10, err: boom}, &chunkReader{data: data[:1000]})
		if !errors.Is(err, boom) || n != 10 {
			t.Fatalf("got %d, %v; want 10, boom", n, err)
		}
		n, err = relayCopy(failWriter{after: 10}, &chunkReader{data: data[:1000]})
		if !errors.Is(err, io.ErrShortWrite) || n != 10 {
			t.Fatalf("got %d, %v; want 10, short write", n, err)
		}
	})
	t.Run("a failed read ends the copy", func(t *testing.T) {
		boom := errors.New("boom")
		var w bytes.Buffer
		if _, err := relayCopy(&w, io.MultiReader(bytes.NewReader(data[:10]), errReader{boom})); !errors.Is(err, boom) {
			t.Fatalf("got %v, want boom", err)
		}
	})
}

// failWriter takes after bytes of the first write, then returns err.
type failWriter struct {
	after int
	err   error
}

func (w failWriter) Write(p []byte) (int, error) { return min(len(p), w.after), w.err }

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
