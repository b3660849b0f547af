// Package grammartest checks a hand-written name check against the regular expression it
// stands for. The project writes such checks out where compiling the expression at
// package initialisation would cost every process that links the package (counted
// repetitions such as {1,128} expand into large programs); the expression stays the
// contract, and this package proves the two agree.
package grammartest

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// Compare fails t for every generated string on which valid and the regular expression re
// disagree. The strings are: every length from 0 to maxLen+2 filled with 'a', each with
// every byte of alphabet placed first, second and last; and 2,000 random strings over
// alphabet and 'a' of up to maxLen+2 bytes. alphabet should hold the bytes the grammar
// admits and a few it refuses.
func Compare(t testing.TB, re string, valid func(string) bool, alphabet string, maxLen int) {
	t.Helper()
	rx := regexp.MustCompile(re)
	check := func(s string) {
		if got, want := valid(s), rx.MatchString(s); got != want {
			t.Errorf("%q: check says %v, %s says %v", s, got, re, want)
		}
	}
	for n := 0; n <= maxLen+2; n++ {
		check(strings.Repeat("a", n))
		for _, pos := range []int{0, 1, n - 1} {
			if pos < 0 || pos >= n {
				continue
			}
			for i := range len(alphabet) {
				b := []byte(strings.Repeat("a", n))
				b[pos] = alphabet[i]
				check(string(b))
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	pool := alphabet + "a"
	for range 2000 {
		b := make([]byte, r.IntN(maxLen+3))
		for i := range b {
			b[i] = pool[r.IntN(len(pool))]
		}
		check(string(b))
	}
}
