package mcpclient

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

// adaptResultJSON is AdaptResult without its hand-written paths: the canonical JSON is
// always json.Marshal's and the result is built field by field. It is the baseline the
// hand encoder (appendPlainText, adaptText) is measured against in BenchmarkAdapt.
func adaptResultJSON(tool string, res *mcp.CallToolResult, store *toolregistry.Attachments, maxOutputBytes int) *toolregistry.Result {
	raw, _ := json.Marshal(res) // nil on error, as canonicalJSON
	return adaptBlocks(tool, res, store, maxOutputBytes, raw)
}

// adaptCases are representative tools/call results: a short text (the echo of most tools),
// several text blocks, a big text (64 KiB of source code with quotes, tabs and '<'), and
// structured content with its text rendering.
func adaptCases() []struct {
	name string
	res  *mcp.CallToolResult
} {
	big := strings.Repeat("\tif x < \"y\" && z > 0 { return fmt.Sprintf(\"%d\\n\", n) } // é\n", 1024)
	return []struct {
		name string
		res  *mcp.CallToolResult
	}{
		{"text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}},
		{"blocks", &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "Found 3 files:"}, &mcp.TextContent{Text: "src/main.go:12: func main() {"},
			&mcp.TextContent{Text: "src/util.go:40: // \"quoted\" <tag> & more"}, &mcp.TextContent{Text: "done"},
		}}},
		{"bigtext", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}},
		{"structured", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: `{"temperature":21.5,"unit":"C","city":"Lyon"}`}},
			StructuredContent: map[string]any{"temperature": 21.5, "unit": "C", "city": "Lyon"},
		}},
	}
}

// TestAdaptResultJSONAgrees: the baseline of BenchmarkAdapt produces what AdaptResult does,
// so the benchmark compares equal work.
func TestAdaptResultJSONAgrees(t *testing.T) {
	for _, c := range adaptCases() {
		hand, std := AdaptResult("t", c.res, nil, defaultMaxOutputBytes), adaptResultJSON("t", c.res, nil, defaultMaxOutputBytes)
		if string(hand.Raw) != string(std.Raw) || string(hand.Structured) != string(std.Structured) || len(hand.Content) != len(std.Content) {
			t.Fatalf("%s: hand %s / %s, json %s / %s", c.name, hand.Raw, hand.Structured, std.Raw, std.Structured)
		}
		for i := range hand.Content {
			if hand.Content[i].Text != std.Content[i].Text || string(hand.Content[i].JSON) != string(std.Content[i].JSON) {
				t.Fatalf("%s: block %d differs", c.name, i)
			}
		}
	}
}

// BenchmarkAdapt measures the result adapter with its hand-written encoder of plain text
// results ("hand": appendPlainText, and adaptText's one allocation) against the same
// adapter on encoding/json alone ("json"), for representative results. docs/design.md
// ("The result adapter's JSON") has the numbers:
//
//	go test -run '^$' -bench Adapt -benchmem -cpu 1 -count 8 ./plugins/mcpclient/ > adapt.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /enc adapt.txt
func BenchmarkAdapt(b *testing.B) {
	for _, c := range adaptCases() {
		b.Run(c.name+"/enc=hand", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				AdaptResult("t", c.res, nil, defaultMaxOutputBytes)
			}
		})
		b.Run(c.name+"/enc=json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				adaptResultJSON("t", c.res, nil, defaultMaxOutputBytes)
			}
		})
	}
}
