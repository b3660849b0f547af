package demoserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"image/png"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var toolNames = []string{"add", "add_tool", "ask", "big", "echo", "fail", "image", "slow"}

// toSchema converts a schema as received by a client (a map) to a Schema.
func toSchema(t *testing.T, v any) *jsonschema.Schema {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("schema %s: %v", data, err)
	}
	return &s
}

func TestListTools(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		cs := tr.connect(t, Options{}, nil)
		res, err := cs.ListTools(testContext(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		tools := make(map[string]*mcp.Tool)
		for _, tool := range res.Tools {
			tools[tool.Name] = tool
		}
		if got := slices.Sorted(maps.Keys(tools)); !slices.Equal(got, toolNames) {
			t.Fatalf("tools = %v, want %v", got, toolNames)
		}

		required := map[string][]string{
			"echo": {"text"}, "add": {"a", "b"}, "slow": nil, "image": nil,
			"fail": nil, "add_tool": {"name"}, "big": {"bytes"}, "ask": nil,
		}
		for name, tool := range tools {
			if tool.Description == "" {
				t.Errorf("%s: no description", name)
			}
			in := toSchema(t, tool.InputSchema)
			if in.Type != "object" {
				t.Errorf("%s: input schema type %q, want object", name, in.Type)
			}
			if got := slices.Sorted(slices.Values(in.Required)); !slices.Equal(got, required[name]) {
				t.Errorf("%s: required = %v, want %v", name, got, required[name])
			}
			for prop, ps := range in.Properties {
				if ps.Description == "" {
					t.Errorf("%s.%s: no description", name, prop)
				}
			}
		}

		slow := toSchema(t, tools["slow"].InputSchema).Properties["ms"]
		if slow.Type != "integer" || string(slow.Default) != "1000" || slow.Maximum == nil || *slow.Maximum != 600000 {
			t.Errorf("slow.ms schema = type %q default %s max %v", slow.Type, slow.Default, slow.Maximum)
		}
		big := toSchema(t, tools["big"].InputSchema).Properties["bytes"]
		if big.Maximum == nil || *big.Maximum != 16<<20 {
			t.Errorf("big.bytes maximum = %v, want %d", big.Maximum, 16<<20)
		}
		if p := toSchema(t, tools["add_tool"].InputSchema).Properties["name"].Pattern; p == "" {
			t.Error("add_tool.name has no pattern")
		}

		if tools["add"].OutputSchema == nil {
			t.Fatal("add has no output schema")
		}
		out := toSchema(t, tools["add"].OutputSchema)
		if sum := out.Properties["sum"]; sum == nil || sum.Type != "number" || !slices.Contains(out.Required, "sum") {
			t.Errorf("add output schema = %+v, want a required number sum", out)
		}
	})
}

func TestToolResults(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		cs := tr.connect(t, Options{}, nil)

		t.Run("echo", func(t *testing.T) {
			res := callTool(t, cs, "echo", map[string]any{"text": "hello, demo"})
			if res.IsError || text(t, res) != "hello, demo" {
				t.Errorf("echo = %+v", res)
			}
		})

		t.Run("add", func(t *testing.T) {
			res := callTool(t, cs, "add", map[string]any{"a": 2, "b": 3.5})
			if res.IsError || text(t, res) != "5.5" {
				t.Errorf("add text = %+v", res)
			}
			data, err := json.Marshal(res.StructuredContent)
			if err != nil {
				t.Fatal(err)
			}
			if string(data) != `{"sum":5.5}` {
				t.Errorf("add structuredContent = %s, want {\"sum\":5.5}", data)
			}
		})

		t.Run("add overflow", func(t *testing.T) {
			res := callTool(t, cs, "add", map[string]any{"a": 1e308, "b": 1e308})
			if !res.IsError || !strings.Contains(text(t, res), "overflows") {
				t.Errorf("add overflow = %+v", res)
			}
		})

		t.Run("image", func(t *testing.T) {
			res := callTool(t, cs, "image", map[string]any{})
			if res.IsError || len(res.Content) != 1 {
				t.Fatalf("image = %+v", res)
			}
			img, ok := res.Content[0].(*mcp.ImageContent)
			if !ok || img.MIMEType != "image/png" {
				t.Fatalf("image content = %#v", res.Content[0])
			}
			checkPNG(t, img.Data)
		})

		t.Run("fail", func(t *testing.T) {
			res := callTool(t, cs, "fail", map[string]any{"message": "boom"})
			if !res.IsError || text(t, res) != "boom" {
				t.Errorf("fail = %+v", res)
			}
			res = callTool(t, cs, "fail", nil)
			if !res.IsError || text(t, res) != defaultFailText {
				t.Errorf("fail without message = %+v", res)
			}
		})

		t.Run("big", func(t *testing.T) {
			for _, n := range []int{0, 1, len(bigLine) + 3, 64 << 10} {
				res := callTool(t, cs, "big", map[string]any{"bytes": n})
				if got := len(text(t, res)); res.IsError || got != n {
					t.Errorf("big %d: %d bytes, isError %v", n, got, res.IsError)
				}
			}
		})

		t.Run("slow", func(t *testing.T) {
			res := callTool(t, cs, "slow", map[string]any{"ms": 1})
			if res.IsError || text(t, res) != "waited 1 ms" {
				t.Errorf("slow = %+v", res)
			}
		})

		// Arguments that violate the schemas come back as tool errors.
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"echo", map[string]any{}},
			{"echo", map[string]any{"text": 3}},
			{"add", map[string]any{"a": 1}},
			{"slow", map[string]any{"ms": maxSlowMillis + 1}},
			{"slow", map[string]any{"ms": -1}},
			{"big", map[string]any{"bytes": maxBigBytes + 1}},
			{"add_tool", map[string]any{"name": "no spaces"}},
			{"add_tool", map[string]any{"name": ""}},
		} {
			t.Run(fmt.Sprintf("invalid %s %v", c.tool, c.args), func(t *testing.T) {
				if res := callTool(t, cs, c.tool, c.args); !res.IsError {
					t.Errorf("%s %v: no tool error: %+v", c.tool, c.args, res)
				}
			})
		}
	})
}

// checkPNG asserts that data is the demo PNG.
func checkPNG(t *testing.T, data []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decoding PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != logoSize || b.Dy() != logoSize {
		t.Errorf("PNG is %dx%d, want %dx%d", b.Dx(), b.Dy(), logoSize, logoSize)
	}
	for y := range logoSize {
		for x := range logoSize {
			want := color.NRGBA{R: uint8(x * 255 / (logoSize - 1)), G: uint8(y * 255 / (logoSize - 1)), B: 0x80, A: 0xff}
			if got := color.NRGBAModel.Convert(img.At(x, y)); got != want {
				t.Fatalf("pixel (%d, %d) = %v, want %v (the gradient)", x, y, got, want)
			}
		}
	}
}

// TestLogoPixels checks the embedded PNG itself.
func TestLogoPixels(t *testing.T) { checkPNG(t, logoPNG()) }

// progressRecorder collects progress notifications for one token.
func progressRecorder() (*mcp.ClientOptions, <-chan *mcp.ProgressNotificationParams) {
	ch := make(chan *mcp.ProgressNotificationParams, 1024)
	return &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case ch <- req.Params:
			default:
			}
		},
	}, ch
}

func TestSlowProgress(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		copts, progress := progressRecorder()
		cs := tr.connect(t, Options{}, copts)
		params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 30}}
		params.SetProgressToken("tok")
		res, err := cs.CallTool(testContext(t), params)
		if err != nil || res.IsError {
			t.Fatalf("slow: %v %+v", err, res)
		}
		// Notifications may be dispatched after the response; wait for the
		// final one rather than assuming an order.
		last := -1.0
		for {
			p := receive(t, progress, "progress")
			if p.ProgressToken != "tok" || p.Total != 30 {
				t.Fatalf("progress = %+v", p)
			}
			if p.Progress <= last {
				t.Fatalf("progress went from %v to %v", last, p.Progress)
			}
			last = p.Progress
			if p.Progress == p.Total {
				break
			}
		}
	})
}

func TestSlowWithoutTokenSendsNoProgress(t *testing.T) {
	copts, progress := progressRecorder()
	cs := connectMemory(t, New(Options{}), copts, "")
	callTool(t, cs, "slow", map[string]any{"ms": 20})
	// Without a token no notification may ever arrive. A further round trip
	// gives a misbehaving server's notification time to be dispatched, so
	// this check can miss a bug but cannot flake.
	callTool(t, cs, "echo", map[string]any{"text": "flush"})
	select {
	case p := <-progress:
		t.Fatalf("unexpected progress %+v", p)
	default:
	}
}

func TestSlowCancellation(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		logs := newLogRecorder("slow: cancelled")
		copts, progress := progressRecorder()
		cs := tr.connect(t, Options{Logger: slog.New(logs)}, copts)

		cx, cancel := context.WithCancel(testContext(t))
		defer cancel()
		params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": maxSlowMillis}}
		params.SetProgressToken(7)
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(cx, params)
			done <- err
		}()

		// The first progress notification proves the handler is waiting.
		if p := receive(t, progress, "first progress"); p.Progress != 0 {
			t.Fatalf("first progress = %+v", p)
		}
		cancel()
		if err := receive(t, done, "the call to return"); !errors.Is(err, context.Canceled) {
			t.Fatalf("call returned %v, want context.Canceled", err)
		}
		rec := receive(t, logs.records, "the handler to observe cancellation")
		if rec.Message != "slow: cancelled" || attr(rec, "ms") != fmt.Sprint(maxSlowMillis) {
			t.Fatalf("log record = %q %v", rec.Message, rec)
		}

		// The session is still usable.
		if got := text(t, callTool(t, cs, "echo", map[string]any{"text": "after"})); got != "after" {
			t.Errorf("echo after cancel = %q", got)
		}
	})
}

func TestAddToolListChanged(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		changed := make(chan struct{}, 16)
		cs := tr.connect(t, Options{}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				select {
				case changed <- struct{}{}:
				default:
				}
			},
		})

		res := callTool(t, cs, "add_tool", map[string]any{"name": "x1"})
		if res.IsError || text(t, res) != "registered tool extra_x1" {
			t.Fatalf("add_tool = %+v", res)
		}
		receive(t, changed, "tools/list_changed")

		if !listsTool(t, cs, "extra_x1") {
			t.Fatalf("extra_x1 not listed after add_tool")
		}
		if got := text(t, callTool(t, cs, "extra_x1", map[string]any{})); !strings.HasPrefix(got, "extra_x1:") {
			t.Errorf("extra_x1 = %q", got)
		}

		res = callTool(t, cs, "add_tool", map[string]any{"name": "x1"})
		if text(t, res) != "replaced tool extra_x1" {
			t.Errorf("second add_tool = %+v", res)
		}
		receive(t, changed, "tools/list_changed after replacement")
	})
}

func TestAddToolBudget(t *testing.T) {
	cs := connectMemory(t, New(Options{}), nil, "")
	for i := range maxExtraTools {
		if res := callTool(t, cs, "add_tool", map[string]any{"name": fmt.Sprint(i)}); res.IsError {
			t.Fatalf("add_tool %d: %+v", i, res)
		}
	}
	res := callTool(t, cs, "add_tool", map[string]any{"name": "one-too-many"})
	if !res.IsError || !strings.Contains(text(t, res), errTooManyTools.Error()) {
		t.Errorf("add_tool over budget = %+v", res)
	}
	// Replacing an existing tool is still allowed.
	if res := callTool(t, cs, "add_tool", map[string]any{"name": "0"}); res.IsError {
		t.Errorf("replacing at the budget: %+v", res)
	}
}

func TestAddToolIsPerServer(t *testing.T) {
	s1, s2 := New(Options{}), New(Options{})
	cs1 := connectMemory(t, s1, nil, "")
	cs2 := connectMemory(t, s2, nil, "")
	callTool(t, cs1, "add_tool", map[string]any{"name": "only1"})
	list, err := cs2.ListTools(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != len(toolNames) {
		t.Errorf("second server lists %d tools, want %d", len(list.Tools), len(toolNames))
	}
}

func TestPagination(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		cs := tr.connect(t, Options{PageSize: 2}, nil)
		cx := testContext(t)

		var names []string
		var sizes []int
		cursor := ""
		for {
			res, err := cs.ListTools(cx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, len(res.Tools))
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		if !slices.Equal(sizes, []int{2, 2, 2, 2}) {
			t.Errorf("tool page sizes = %v, want [2 2 2 2]", sizes)
		}
		if slices.Sort(names); !slices.Equal(names, toolNames) {
			t.Errorf("paged tools = %v, want %v", names, toolNames)
		}

		var uris []string
		sizes = nil
		cursor = ""
		for {
			res, err := cs.ListResources(cx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, len(res.Resources))
			for _, r := range res.Resources {
				uris = append(uris, r.URI)
			}
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		if !slices.Equal(sizes, []int{2, 1}) {
			t.Errorf("resource page sizes = %v, want [2 1]", sizes)
		}
		if slices.Sort(uris); !slices.Equal(uris, []string{configURI, logoURI, readmeURI}) {
			t.Errorf("paged resources = %v", uris)
		}

		// The SDK's iterator follows the cursors too.
		n := 0
		for _, err := range cs.Tools(cx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != len(toolNames) {
			t.Errorf("Tools iterator yielded %d tools, want %d", n, len(toolNames))
		}
	})
}

func TestInstructionsAndName(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		ir := tr.connect(t, Options{}, nil).InitializeResult()
		if ir.Instructions != DefaultInstructions || ir.ServerInfo.Name != DefaultName {
			t.Errorf("default: instructions %q, name %q", ir.Instructions, ir.ServerInfo.Name)
		}
		ir = tr.connect(t, Options{Name: "custom", Instructions: "Be brief."}, nil).InitializeResult()
		if ir.Instructions != "Be brief." || ir.ServerInfo.Name != "custom" {
			t.Errorf("custom: instructions %q, name %q", ir.Instructions, ir.ServerInfo.Name)
		}
		if caps := ir.Capabilities; caps.Tools == nil || !caps.Tools.ListChanged || caps.Resources == nil {
			t.Errorf("capabilities = %+v", caps)
		}
	})
}

func TestNegativePageSizeMeansDefault(t *testing.T) {
	cs := connectMemory(t, New(Options{PageSize: -1}), nil, "")
	res, err := cs.ListTools(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(toolNames) || res.NextCursor != "" {
		t.Errorf("got %d tools and cursor %q", len(res.Tools), res.NextCursor)
	}
}
