package mcpclient

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

// FuzzAdaptResult feeds arbitrary bytes, as the result of a tools/call, through the SDK's
// decoding and the result adapter. Decoding may reject the input, with an error that says
// what was wrong; whatever it accepts, the adapter turns into a result without panicking:
// model content is never empty, IsError is mirrored, the canonical JSON is valid (and, on
// the fast path for plain text, byte for byte what encoding/json produces), and the model
// text respects maxOutputBytes, with a marker when something was dropped.
func FuzzAdaptResult(f *testing.F) {
	for _, seed := range []struct {
		raw string
		max int
	}{
		{`{"content":[{"type":"text","text":"hello"}]}`, 0},
		{`{"content":[{"type":"text","text":"a <b> & \u2028 \ud800"}],"isError":true}`, 5},
		{`{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"text","text":"x"}]}`, 100},
		{`{"content":[{"type":"audio","data":"AAAA","mimeType":"audio/wav"},{"type":"resource_link","uri":"file:///a","name":"a"}]}`, 10},
		{`{"content":[{"type":"resource","resource":{"uri":"file:///r","text":"t"}}],"structuredContent":{"n":1}}`, 3},
		{`{"content":[],"structuredContent":{"big":"0123456789"}}`, 4},
		{`{"content":[{"type":"hologram"}]}`, 0},
		{`{"content":[null]}`, 0},
		{`{"content":"not a list"}`, 0},
		{`{"content":[{"type":"text","text":"éééé"}]}`, 3},
		{`[]`, 0},
		{``, 0},
	} {
		f.Add([]byte(seed.raw), seed.max)
	}
	f.Fuzz(func(t *testing.T, raw []byte, max int) {
		var res mcp.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatalf("decoding %q failed without saying why", raw)
			}
			return
		}
		max = max % 1_000_000
		if max < 0 {
			max = -max
		}
		out := AdaptResult("t", &res, nil, max)
		if out == nil || len(out.Content) == 0 {
			t.Fatalf("no model content for %q", raw)
		}
		if out.IsError != res.IsError {
			t.Fatalf("IsError %v, result %v", out.IsError, res.IsError)
		}
		if out.Raw != nil && !json.Valid(out.Raw) {
			t.Fatalf("canonical JSON is invalid: %q", out.Raw)
		}
		if plainText(&res) {
			want, err := json.Marshal(&res)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Raw, want) {
				t.Fatalf("canonical JSON fast path:\n got %s\nwant %s", out.Raw, want)
			}
		}
		for _, c := range out.Content {
			if c.Type == toolregistry.ContentImage {
				t.Fatalf("an image was stored without a store: %+v", c)
			}
		}
		if max == 0 {
			return
		}
		size, marked := 0, false
		for _, c := range out.Content {
			switch c.Type {
			case toolregistry.ContentText:
				text := c.Text
				if i := strings.LastIndex(text, "[output truncated by the MCP client: "); i >= 0 &&
					strings.HasSuffix(text, "(maxOutputBytes "+itoa(max)+")]") {
					text, marked = strings.TrimSuffix(text[:i], "\n"), true
				}
				size += len(text)
			case toolregistry.ContentJSON:
				size += len(c.JSON)
			}
		}
		if size > max {
			t.Fatalf("%d bytes of model text, maxOutputBytes %d", size, max)
		}
		full := AdaptResult("t", &res, nil, 0)
		fullSize := 0
		for _, c := range full.Content {
			fullSize += len(c.Text) + len(c.JSON)
		}
		if (fullSize > max) != marked {
			t.Fatalf("uncapped %d bytes, maxOutputBytes %d, marker present %v: %+v", fullSize, max, marked, out.Content)
		}
	})
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
