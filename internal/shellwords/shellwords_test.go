package shellwords

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "", want: nil},
		{in: "   \t\n ", want: nil},
		{in: "npx -y server", want: []string{"npx", "-y", "server"}},
		{in: "  a   b  ", want: []string{"a", "b"}},
		{in: "a\tb\nc", want: []string{"a", "b", "c"}},
		{in: `'a b' c`, want: []string{"a b", "c"}},
		{in: `"a b" c`, want: []string{"a b", "c"}},
		{in: `a" b "c`, want: []string{"a b c"}},
		{in: `'it''s'`, want: []string{"its"}},
		{in: `"it's"`, want: []string{"it's"}},
		{in: `'say "hi"'`, want: []string{`say "hi"`}},
		{in: `"say \"hi\""`, want: []string{`say "hi"`}},
		{in: `a\ b`, want: []string{"a b"}},
		{in: `a\\b`, want: []string{`a\b`}},
		{in: `\'a`, want: []string{"'a"}},
		{in: `'\n'`, want: []string{`\n`}},
		{in: `"\n"`, want: []string{`\n`}},
		{in: `"\$HOME \\ \` + "`" + `"`, want: []string{`$HOME \ ` + "`"}},
		{in: `$HOME *.go | wc > out; x && y`, want: []string{"$HOME", "*.go", "|", "wc", ">", "out;", "x", "&&", "y"}},
		{in: `'' ""`, want: []string{"", ""}},
		{in: `a '' b`, want: []string{"a", "", "b"}},
		{in: "a \\\nb", want: []string{"a", "b"}},
		{in: "\"a\\\nb\"", want: []string{"ab"}},
		{in: `--flag="x y"`, want: []string{"--flag=x y"}},
		{in: `C:\\path\\to\\server.exe`, want: []string{`C:\path\to\server.exe`}},
		{in: `héllo wörld`, want: []string{"héllo", "wörld"}},
		{in: `'unterminated`, err: "unterminated single quote"},
		{in: `"unterminated`, err: "unterminated double quote"},
		{in: `"ends in backslash\"`, err: "unterminated double quote"},
		{in: `trailing\`, err: "trailing backslash"},
	} {
		got, err := Split(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Split(%q) = %q, %v; want error %q", tc.in, got, err, tc.err)
			}
		case err != nil:
			t.Errorf("Split(%q): %v", tc.in, err)
		case !slices.Equal(got, tc.want):
			t.Errorf("Split(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"a b", `'a' "b" \c`, `"\"`, "x\\\ny"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := Split(s)
		if err != nil {
			return
		}
		// Quoting every word back must give the same words.
		var b strings.Builder
		for _, w := range words {
			b.WriteString("'" + strings.ReplaceAll(w, "'", `'\''`) + "' ")
		}
		again, err := Split(b.String())
		if err != nil || !slices.Equal(words, again) {
			t.Fatalf("re-quoted %q: got %q, %v; want %q", b.String(), again, err, words)
		}
	})
}
