package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR-fake-but-sniffable")

// newStore returns an attachment store (the registry's).
func newStore(t *testing.T) *toolregistry.Attachments {
	t.Helper()
	e := newEnv(t)
	return e.reg.Attachments()
}

func TestAdaptResultProjection(t *testing.T) {
	store := newStore(t)
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "first"},
		&mcp.TextContent{Text: "second"},
		&mcp.ImageContent{MIMEType: "image/png", Data: pngBytes},
		&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
		&mcp.ResourceLink{Name: "guide", URI: "docs://guide"},
		&mcp.ResourceLink{URI: "docs://nameless"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "docs://x", Text: "inline"}},
		&mcp.ToolUseContent{ID: "u1", Name: "t", Input: map[string]any{}}, //nolint:staticcheck // SEP-2577: sampling stays for peers on protocol versions that have it (2025-11-25)
		&mcp.TextContent{Text: "last"},
	}}
	out := AdaptResult("tool", res, store, 0)
	if len(out.Content) != 3 {
		t.Fatalf("blocks %+v", out.Content)
	}
	if out.Content[0].Text != "first\nsecond" {
		t.Errorf("first run %q", out.Content[0].Text)
	}
	img := out.Content[1]
	if img.Type != toolregistry.ContentImage || img.Attachment.MediaType != "image/png" || img.Attachment.Size != len(pngBytes) {
		t.Fatalf("image block %+v", img)
	}
	if data, mt, ok := store.Get(img.Attachment.ID); !ok || mt != "image/png" || !bytes.Equal(data, pngBytes) {
		t.Errorf("stored %q %q %v", data, mt, ok)
	}
	want := strings.Join([]string{
		"[audio result unsupported: audio/wav; raw audio data remains available to programmatic callers]",
		"Resource link: guide (docs://guide)",
		"[resource link unavailable: the MCP block is missing its name or URI]",
		"[embedded resource unsupported: docs://x; raw resource data remains available to programmatic callers]",
		"[unsupported MCP content type: tool_use]",
		"last",
	}, "\n")
	if out.Content[2].Text != want {
		t.Errorf("second run:\n%s\nwant:\n%s", out.Content[2].Text, want)
	}
	// The canonical JSON keeps everything, base64 included.
	var raw struct {
		Content []map[string]any `json:"content"`
	}
	if err := json.Unmarshal(out.Raw, &raw); err != nil || len(raw.Content) != 9 || raw.Content[2]["type"] != "image" ||
		!strings.Contains(string(out.Raw), `"data":"iVBORw0K`) {
		t.Errorf("raw %s (%v)", out.Raw, err)
	}
	if strings.Contains(out.Content[2].Text, "iVBOR") {
		t.Error("base64 in model content")
	}
}

func TestAdaptResultImageBatchRefused(t *testing.T) {
	store := newStore(t)
	res := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.ImageContent{MIMEType: "image/png", Data: pngBytes},
		&mcp.ImageContent{MIMEType: "image/bmp", Data: []byte("BM....")},
		&mcp.ImageContent{MIMEType: "image/jpeg", Data: pngBytes},
	}}
	out := AdaptResult("tool", res, store, 0)
	text := out.Text()
	for _, want := range []string{
		"[image unavailable: image/png; another image in the same result was invalid;",
		"[image unavailable: image/bmp; the declared media type is not PNG, JPEG, WebP or GIF;",
		"[image unavailable: image/jpeg; the image data does not match its declared media type;",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if store.Len() != 0 {
		t.Errorf("%d images stored from a refused batch", store.Len())
	}
	// Without a store, or in an error result, images are described, never stored.
	if got := AdaptResult("tool", &mcp.CallToolResult{Content: res.Content[:1]}, nil, 0).Text(); !strings.Contains(got, "no attachment store is available") {
		t.Errorf("no store: %q", got)
	}
	errRes := &mcp.CallToolResult{IsError: true, Content: res.Content[:1]}
	if got := AdaptResult("tool", errRes, store, 0); !got.IsError || !strings.Contains(got.Text(), "the tool reported an error") || store.Len() != 0 {
		t.Errorf("error result: %+v", got)
	}
}

func TestAdaptResultEdges(t *testing.T) {
	if got := AdaptResult("t", &mcp.CallToolResult{}, nil, 0).Text(); got != "(t returned no model-visible content)" {
		t.Errorf("empty: %q", got)
	}
	if got := AdaptResult("t", &mcp.CallToolResult{Content: []mcp.Content{nil, &mcp.TextContent{}}}, nil, 0).Text(); got != "[unsupported MCP content block: expected an object]" {
		t.Errorf("nil block: %q", got)
	}
	if got := AdaptResult("t", &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{}}}, nil, 0).Text(); !strings.Contains(got, "unknown media type") {
		t.Errorf("audio without media type: %q", got)
	}
	structured := AdaptResult("t", &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}}, nil, 0)
	if string(structured.Structured) != `{"n":1}` || structured.Content[0].Type != toolregistry.ContentJSON {
		t.Errorf("structured only: %+v", structured)
	}
}

func TestAdaptResultCap(t *testing.T) {
	long := strings.Repeat("é", 600) // 1200 bytes
	out := AdaptResult("t", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: long}}}, nil, 1001)
	text := out.Content[0].Text
	body, marker, _ := strings.Cut(text, "\n")
	want := fmt.Sprintf("[output truncated by the MCP client: %d of 1200 bytes dropped (maxOutputBytes 1001)]", 1200-len(body))
	if len(text) > 1001 || len(body) < 900 || len(body)%2 != 0 || marker != want {
		t.Errorf("capped text %d bytes (body %d), marker %q, want %q", len(text), len(body), marker, want)
	}
	if !strings.Contains(string(out.Raw), long) {
		t.Error("raw result truncated")
	}
}

// TestResultsEndToEnd (item 5): images from a real server become attachments, structured
// content is validated against the advertised output schema, and maxOutputBytes caps
// output.
func TestResultsEndToEnd(t *testing.T) {
	e := newEnv(t)
	srv := demo()
	rawTool(srv, &mcp.Tool{Name: "liar", OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no structure"}}}, nil
		})
	rawTool(srv, &mcp.Tool{Name: "wrong", OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "bad"}}, StructuredContent: map[string]any{"n": "x"}}, nil
		})
	cfg := memConfig("srv")
	cfg.MaxOutputBytes = 1000
	e.mount(nil, cfg, &hooks{dial: newMemServer(srv).dial})

	img := e.mustCall(nil, "mcp__srv__image", `{}`)
	if len(img.Content) != 1 || img.Content[0].Type != toolregistry.ContentImage {
		t.Fatalf("image result %+v", img.Content)
	}
	if data, mt, ok := e.reg.Attachments().Get(img.Content[0].Attachment.ID); !ok || mt != "image/png" || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Errorf("attachment %v %q", ok, mt)
	}
	if !strings.Contains(string(img.Raw), `"mimeType":"image/png"`) {
		t.Errorf("raw %s", img.Raw)
	}

	for _, tool := range []string{"mcp__srv__liar", "mcp__srv__wrong"} {
		if _, err := e.call(nil, tool, `{}`); !errors.Is(err, toolregistry.ErrInvalidOutput) {
			t.Errorf("%s: %v", tool, err)
		}
	}

	big := e.mustCall(nil, "mcp__srv__big", `{"bytes":5000}`)
	if text := big.Text(); len(text) > 1000 || !strings.Contains(text, " of 5000 bytes dropped (maxOutputBytes 1000)]") {
		t.Errorf("big: %d bytes, ends %q", len(text), text[max(0, len(text)-120):])
	}
}

// TestCanonicalJSONFastPath: the direct encoding of plain text results is byte for byte
// what the SDK's marshalling produces.
func TestCanonicalJSONFastPath(t *testing.T) {
	texts := []string{"", "hello", `quote " and \ backslash`, "tab\tnew\nline\r\b\f\x00\x1f",
		"<html> & </html>", "line\u2028sep\u2029", "émoji 😀", "bad \xff utf8 \xc3", strings.Repeat("x", 5000)}
	for _, isErr := range []bool{false, true} {
		for _, text := range texts {
			res := &mcp.CallToolResult{IsError: isErr, Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: "b"}}}
			if !plainText(res) {
				t.Fatal("not plain")
			}
			want, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if got := canonicalJSON(res); string(got) != string(want) {
				t.Errorf("text %q:\n got %s\nwant %s", text, got, want)
			}
		}
	}
	if plainText(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a", Meta: mcp.Meta{"k": 1}}}}) {
		t.Error("meta counted as plain")
	}
}

// rewritingTransport is a server transport whose responses pass through edit: a way to make
// a real go-sdk server send content the SDK has no type for.
type rewritingTransport struct {
	mcp.Transport
	edit func(json.RawMessage) json.RawMessage
}

func (t rewritingTransport) Connect(cx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(cx)
	return rewritingConn{conn, t.edit}, err
}

type rewritingConn struct {
	mcp.Connection
	edit func(json.RawMessage) json.RawMessage
}

func (c rewritingConn) Write(cx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Response); ok && r.Result != nil {
		r.Result = c.edit(r.Result)
	}
	return c.Connection.Write(cx, msg)
}

// TestUndecodableContent (item 5): a content type the SDK cannot decode fails that call with
// an explicit diagnostic; the session stays up.
func TestUndecodableContent(t *testing.T) {
	e := newEnv(t)
	srv := demo()
	dial := func(cx context.Context, cfg Config, opts dialOptions) (*connection, error) {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(cx, rewritingTransport{st, func(raw json.RawMessage) json.RawMessage {
			return bytes.ReplaceAll(raw, []byte(`"type":"text","text":"holo`), []byte(`"type":"hologram","text":"holo`))
		}}, nil)
		if err != nil {
			return nil, err
		}
		cs, err := connectSession(cx, cfg, opts, ct)
		if err != nil {
			return nil, err
		}
		return newConnection(cfg, "in-memory", cs, func(context.Context) error {
			_ = cs.Close()
			return ss.Wait()
		}), nil
	}
	e.mount(nil, memConfig("srv"), &hooks{dial: dial})
	_, err := e.call(nil, "mcp__srv__echo", `{"text":"holo"}`)
	if !errors.Is(err, toolregistry.ErrToolError) || !strings.Contains(err.Error(), `[unsupported MCP content: the result could not be decoded:`) ||
		!strings.Contains(err.Error(), `"hologram"`) {
		t.Fatalf("call: %v", err)
	}
	if got := e.mustCall(nil, "mcp__srv__echo", `{"text":"plain"}`).Text(); got != "plain" {
		t.Errorf("next call %q", got)
	}
	if got := e.st.phases("srv"); !phasesEqual(got, PhaseConnecting, PhaseConnected) {
		t.Errorf("phases %v", got)
	}
}
