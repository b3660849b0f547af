package mcpresources

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func TestModelText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			"blob with MIME type after it, key order kept, white space dropped",
			`{ "contents": [ {"uri": "docs://image", "blob": "AAECAwQFBgc=", "mimeType": "image/png"} ], "z": 1, "a": 2 }`,
			`{"contents":[{"uri":"docs://image","blob":"[binary blob: 8 bytes, image/png]","mimeType":"image/png"}],"z":1,"a":2}`,
		},
		{
			"blob without MIME type",
			`{"contents":[{"uri":"x://y","blob":"QUJD"}]}`,
			`{"contents":[{"uri":"x://y","blob":"[binary blob: 3 bytes]"}]}`,
		},
		{
			"strings byte for byte as sent: escapes and HTML characters kept",
			`{"contents":[{"uri":"x://t","mimeType":"text/html","text":"<p>a \"b\" & \u00e9\n</p>"}]}`,
			`{"contents":[{"uri":"x://t","mimeType":"text/html","text":"<p>a \"b\" & \u00e9\n</p>"}]}`,
		},
		{
			"nested and repeated blobs, non-string blob kept",
			`{"a":[{"blob":"QQ=="},{"b":{"blob":"QUI="}}],"blob":5,"c":[[{"blob":null}]]}`,
			`{"a":[{"blob":"[binary blob: 1 bytes]"},{"b":{"blob":"[binary blob: 2 bytes]"}}],"blob":5,"c":[[{"blob":null}]]}`,
		},
		{
			"escaped blob string, URL-safe unpadded",
			`{"blob":"QU\/C","mimeType":"application/octet-stream"}`,
			`{"blob":"[binary blob: 3 bytes, application/octet-stream]","mimeType":"application/octet-stream"}`,
		},
		{
			"invalid base64",
			`{"blob":"not*base64","mimeType":"image/png"}`,
			`{"blob":"[binary blob: not valid base64, 10 characters, image/png]","mimeType":"image/png"}`,
		},
		{
			"cursor and numbers as sent",
			`{"resources":[],"nextCursor":"eyJvZmZzZXQiOjJ9","n":1.50e3}`,
			`{"resources":[],"nextCursor":"eyJvZmZzZXQiOjJ9","n":1.50e3}`,
		},
		{"empty object", `{}`, `{}`},
		{"scalar", ` "s" `, `"s"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := modelText("docs", json.RawMessage(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if want := "MCP server: docs\n" + tc.want; got != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
	for _, bad := range []string{``, ` `, `{`, `{"a":}`, `[1,]`, `{} {}`, `{"a":1}x`, `nul`, `{"blob":"x"`} {
		if got, err := modelText("docs", json.RawMessage(bad)); err == nil {
			t.Errorf("modelText(%q) = %q, want an error", bad, got)
		}
	}
}

func TestBase64Size(t *testing.T) {
	for n := range 40 {
		data := []byte(strings.Repeat("x", n))
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			s := enc.EncodeToString(data)
			if got, ok := base64Size([]byte(s)); !ok || got != n {
				t.Fatalf("base64Size(%q) = %d, %v; want %d", s, got, ok, n)
			}
		}
	}
	if got, ok := base64Size([]byte("QUJD\nREVG\r\n")); !ok || got != 6 {
		t.Fatalf("with line breaks: %d, %v", got, ok)
	}
	for _, bad := range []string{"Q", "QUJDR", "QQ=A", "QQ===", "Q===", "QUJD*", "QU=", "é"} {
		if n, ok := base64Size([]byte(bad)); ok {
			t.Errorf("base64Size(%q) = %d, want not base64", bad, n)
		}
	}
}

func TestPromptText(t *testing.T) {
	if got := promptText(nil); got != "" {
		t.Fatalf("no servers: %q, want empty (the section is dropped)", got)
	}
	got := promptText([]string{"a", "b-c"})
	if !strings.Contains(got, `Use one of these names as the server argument: ["a","b-c"].`) {
		t.Fatalf("%s", got)
	}
}

func BenchmarkModelText(b *testing.B) {
	blob := base64.StdEncoding.EncodeToString(make([]byte, 1<<20))
	raw := json.RawMessage(`{"contents":[{"uri":"x://big","mimeType":"image/png","blob":"` + blob + `"},{"uri":"x://t","text":"` + strings.Repeat("lorem ipsum ", 1000) + `"}]}`)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := modelText("bench", raw); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzModelText checks the projection of any valid JSON: it never fails, yields valid JSON,
// and equals the compacted input when nothing is named blob.
func FuzzModelText(f *testing.F) {
	for _, seed := range []string{
		`{"contents":[{"uri":"a","blob":"QUJD","mimeType":"x/y"}]}`,
		`{"mimeType":"a\"b","blob":"QQ==","blob":"??"}`,
		`[1, -2.5e+3, true, false, null, "\\\"", {"": {}}, []]`,
		` { "a" : [ { } , [ ] ] } `,
		`"blob"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		got, err := modelText("s", raw)
		if err != nil {
			t.Fatalf("valid JSON %q: %v", raw, err)
		}
		body, ok := strings.CutPrefix(got, "MCP server: s\n")
		if !ok || !json.Valid([]byte(body)) {
			t.Fatalf("%q projected to %q", raw, got)
		}
		if !bytes.Contains(raw, []byte(`"blob"`)) {
			var want bytes.Buffer
			if err := json.Compact(&want, raw); err != nil {
				t.Fatal(err)
			}
			if body != want.String() {
				t.Fatalf("%q projected to %q, want %q", raw, body, want.String())
			}
		}
	})
}
