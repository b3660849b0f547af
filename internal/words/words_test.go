package words

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "s", 1: "", 2: "s", -1: "s"} {
		if got := Plural(n); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"abcd", 1, "…"},
		{"abcd", 0, "abcd"},
		{"héllo", 5, "héllo"}, // 6 bytes, 5 runes: not cut
		{"héllo wörld", 4, "hél…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"a😀b😀c", 3, "a😀…"},
	} {
		if got := Clip(tc.s, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func FuzzClip(f *testing.F) {
	for _, s := range []string{"", "abc", "héllo", "日本語", "\xff\xfe", "a😀b"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		got := Clip(s, n)
		runes := utf8.RuneCountInString(s)
		switch {
		case n < 1 || runes <= n:
			if got != s {
				t.Fatalf("Clip(%q, %d) = %q, want it whole", s, n, got)
			}
		default:
			if utf8.RuneCountInString(got) != n || !strings.HasSuffix(got, "…") || !strings.HasPrefix(s, strings.TrimSuffix(got, "…")) {
				t.Fatalf("Clip(%q, %d) = %q", s, n, got)
			}
			if utf8.ValidString(s) && !utf8.ValidString(got) {
				t.Fatalf("Clip(%q, %d) = %q splits a character", s, n, got)
			}
		}
	})
}
