package termsafe_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cordisgo/harness/internal/termsafe"
)

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, str, line string }{
		{"plain text, ünïcode ✓", "plain text, ünïcode ✓", "plain text, ünïcode ✓"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab", `two\nlines\tand a tab`},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`, `\x1b]0;pwned\x07title`},
		{"\x1b[2J\x1b[31mred\x1b[0m", `\x1b[2J\x1b[31mred\x1b[0m`, `\x1b[2J\x1b[31mred\x1b[0m`},
		{"c1 \u009b31m and \u0085", `c1 \u009b31m and \u0085`, `c1 \u009b31m and \u0085`},
		{"raw \x9b31m byte", `raw \x9b31m byte`, `raw \x9b31m byte`},
		{"dos\r\nline\rover\x7f", "dos\nline\\rover\\x7f", `dos\r\nline\rover\x7f`},
		{"\x00nul", `\x00nul`, `\x00nul`},
		{"abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
	} {
		if got := termsafe.String(tc.in); got != tc.str {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.str)
		}
		if got := termsafe.Line(tc.in); got != tc.line {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
		}
	}
}

// Whatever goes in, nothing that a terminal interprets comes out but newline and tab.
func TestNoControlsLeft(t *testing.T) {
	var all strings.Builder
	for b := 0; b < 256; b++ {
		all.WriteByte(byte(b))
	}
	for r := rune(0x80); r < 0xa0; r++ {
		all.WriteRune(r)
	}
	for _, s := range []string{termsafe.String(all.String()), termsafe.Line(all.String())} {
		for _, r := range s {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				t.Fatalf("%U left in %q", r, s)
			}
		}
	}
}

func TestWriter(t *testing.T) {
	var out bytes.Buffer
	w := termsafe.Writer(&out)
	in := "é\x1b[2J ✓\u009b"
	for i := 0; i < len(in); i++ { // one byte at a time: sequences cut between writes
		if _, err := w.Write([]byte{in[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := out.String(), `é\x1b[2J ✓\u009b`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func BenchmarkStringClean(b *testing.B) {
	s := strings.Repeat("an ordinary tool description, nothing to escape. ", 8)
	for b.Loop() {
		_ = termsafe.String(s)
	}
}
