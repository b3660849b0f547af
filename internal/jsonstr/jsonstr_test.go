package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

func encode(t *testing.T, s string, escapeHTML bool) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func check(t *testing.T, s string) {
	for _, html := range []bool{true, false} {
		if got, want := string(Append(nil, s, html)), encode(t, s, html); got != want {
			t.Errorf("Append(%q, %v) = %s, encoding/json %s", s, html, got, want)
		}
	}
}

func TestAppendAsEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote \" and \\", "\n\r\t\b\f\x00\x1f\x7f", "<a href='x'>&amp;</a>",
		"line\u2028sep\u2029", "bad \xff utf-8 \xc3", "中文 ✓ 🙂", "\x1b[31m"} {
		check(t, s)
	}
}

func FuzzAppend(f *testing.F) {
	f.Add("<&>\u2028\xff\n")
	f.Fuzz(check)
}

// Space skips JSON's four whitespace bytes and nothing else.
func TestSpace(t *testing.T) {
	for _, c := range []struct {
		in   string
		i    int
		want int
	}{
		{"", 0, 0},
		{" \t\r\n{", 0, 4},
		{"{ }", 1, 2},
		{"{}", 1, 1},
		{"\v\f{", 0, 0}, // not JSON whitespace
		{"   ", 1, 3},
	} {
		if got := Space([]byte(c.in), c.i); got != c.want {
			t.Errorf("Space(%q, %d) = %d, want %d", c.in, c.i, got, c.want)
		}
	}
}
