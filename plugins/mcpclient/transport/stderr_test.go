package transport

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{name: "empty", max: 8, want: ""},
		{name: "fits", max: 16, writes: []string{"hello ", "world"}, want: "hello world"},
		{name: "exactly full", max: 5, writes: []string{"ab", "cde"}, want: "abcde"},
		{name: "wraps without newline", max: 5, writes: []string{"abc", "defg"}, want: "cdefg"},
		{name: "starts at line boundary", max: 12, writes: []string{"first line\nsecond\nthird\n"}, want: "third\n"},
		{name: "only newline at end keeps fragment", max: 6, writes: []string{"abcdefgh\n"}, want: "defgh\n"},
		{name: "huge single write", max: 4, writes: []string{"0123456789"}, want: "6789"},
		{name: "huge write after data", max: 4, writes: []string{"xy", "abcd"}, want: "abcd"},
		{name: "no cut inside utf8", max: 4, writes: []string{"aé€"}, want: "€"}, // "aé€" = 1+2+3 bytes
		{name: "boundary across wrap", max: 10, writes: []string{"aaaa\nbb", "bb\ncc", "c"}, want: "bbbb\nccc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewTailBuffer(tt.max)
			for _, w := range tt.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := b.Tail(); got != tt.want {
				t.Errorf("Tail() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTailBufferDefaultSize(t *testing.T) {
	b := NewTailBuffer(0)
	_, _ = b.Write(bytes.Repeat([]byte("x"), 3*defaultStderrTailBytes))
	if got, _ := b.bytes(); len(got) != defaultStderrTailBytes {
		t.Fatalf("kept %d bytes, want %d", len(got), defaultStderrTailBytes)
	}
}

// TestTailBufferMatchesNaive compares random write sequences against
// "keep the last max bytes of everything written".
func TestTailBufferMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		max := 1 + r.IntN(40)
		b := NewTailBuffer(max)
		var all []byte
		for range r.IntN(20) {
			p := make([]byte, r.IntN(2*max))
			for i := range p {
				p[i] = byte('a' + r.IntN(26))
			}
			_, _ = b.Write(p)
			all = append(all, p...)
		}
		want := all[len(all)-min(len(all), max):]
		got, dropped := b.bytes()
		if !bytes.Equal(got, want) {
			t.Fatalf("round %d (max %d): got %q, want %q", round, max, got, want)
		}
		if dropped != (len(all) > max) {
			t.Fatalf("round %d: dropped = %v with %d bytes written, max %d", round, dropped, len(all), max)
		}
	}
}

func TestTailBufferConcurrent(t *testing.T) {
	b := NewTailBuffer(256)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				fmt.Fprintf(b, "writer %d line %d\n", g, i)
				_ = b.Tail()
			}
		})
	}
	wg.Wait()
	tail := b.Tail()
	if len(tail) > 256 || !strings.HasSuffix(tail, "\n") {
		t.Fatalf("unexpected tail %q", tail)
	}
	// Every line in the tail is whole: writes are atomic.
	for _, line := range strings.Split(strings.TrimSuffix(tail, "\n"), "\n") {
		var g, i int
		if _, err := fmt.Sscanf(line, "writer %d line %d", &g, &i); err != nil {
			t.Fatalf("torn line %q in %q", line, tail)
		}
	}
}
