package demoserver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// read reads uri and returns its single content.
func read(t *testing.T, cs *mcp.ClientSession, uri string) *mcp.ResourceContents {
	t.Helper()
	res, err := cs.ReadResource(testContext(t), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: %d contents, want 1", uri, len(res.Contents))
	}
	c := res.Contents[0]
	if c.URI != uri {
		t.Errorf("read %s: content URI %q", uri, c.URI)
	}
	return c
}

func TestResources(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		cs := tr.connect(t, Options{Name: "res-test"}, nil)
		cx := testContext(t)

		list, err := cs.ListResources(cx, nil)
		if err != nil {
			t.Fatal(err)
		}
		listed := make(map[string]*mcp.Resource)
		for _, r := range list.Resources {
			listed[r.URI] = r
		}
		for uri, mime := range map[string]string{
			readmeURI: "text/markdown",
			configURI: "application/json",
			logoURI:   "image/png",
		} {
			r := listed[uri]
			if r == nil {
				t.Fatalf("%s not listed", uri)
			}
			if r.MIMEType != mime || r.Name == "" || r.Description == "" {
				t.Errorf("%s listed as %+v", uri, r)
			}
			c := read(t, cs, uri)
			if c.MIMEType != mime {
				t.Errorf("%s: read MIME type %q, want %q", uri, c.MIMEType, mime)
			}
			if size := int64(len(c.Text) + len(c.Blob)); size != r.Size {
				t.Errorf("%s: read %d bytes, listed size %d", uri, size, r.Size)
			}
		}

		readme := read(t, cs, readmeURI).Text
		if !strings.HasPrefix(readme, "# res-test\n") {
			t.Errorf("readme does not start with the server name: %q", readme[:min(len(readme), 40)])
		}
		for _, name := range toolNames {
			if !strings.Contains(readme, "`"+name+"`") {
				t.Errorf("readme does not mention %s", name)
			}
		}

		var cfg demoConfig
		if err := json.Unmarshal([]byte(read(t, cs, configURI).Text), &cfg); err != nil {
			t.Fatalf("config.json: %v", err)
		}
		if cfg.Name != "res-test" || cfg.PageSize != mcp.DefaultPageSize {
			t.Errorf("config.json = %+v", cfg)
		}
		if got := slices.Sorted(slices.Values(cfg.Tools)); !slices.Equal(got, toolNames) {
			t.Errorf("config.json tools = %v, want %v", got, toolNames)
		}

		logo := read(t, cs, logoURI)
		if logo.Text != "" {
			t.Errorf("logo has text %q", logo.Text)
		}
		checkPNG(t, logo.Blob)

		templates, err := cs.ListResourceTemplates(cx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(templates.ResourceTemplates) != 1 {
			t.Fatalf("templates = %+v", templates.ResourceTemplates)
		}
		if rt := templates.ResourceTemplates[0]; rt.URITemplate != notesTemplate || rt.MIMEType != "text/plain" {
			t.Errorf("template = %+v", rt)
		}

		for uri, id := range map[string]string{
			"demo://notes/42":          "42",
			"demo://notes/hello%20you": "hello you",
		} {
			note := read(t, cs, uri)
			if note.MIMEType != "text/plain" || !strings.HasPrefix(note.Text, "Note "+id+"\n") {
				t.Errorf("%s = %+v", uri, note)
			}
		}

		for _, uri := range []string{"demo://missing", "demo://notes/", "other://readme"} {
			_, err := cs.ReadResource(cx, &mcp.ReadResourceParams{URI: uri})
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("read %s: %v, want resource not found", uri, err)
			}
		}
	})
}

func TestReadNoteRejectsBadIDs(t *testing.T) {
	// The template regexp admits only one segment; readNote double-checks
	// what a direct call could pass.
	d := &demo{name: "x"}
	for _, uri := range []string{"demo://notes/a/b", "demo://notes/%zz", "demo://notes/", "demo://other/1"} {
		_, err := d.readNote(t.Context(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("readNote(%s) = %v, want resource not found", uri, err)
		}
	}
}

// TestConfigSubscription: demo://config.json can be subscribed to; add_tool changes it (the
// new tool in extraTools, the listed size following) and notifies the subscribers.
func TestConfigSubscription(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		updated := make(chan string, 16)
		cs := tr.connect(t, Options{}, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
				updated <- r.Params.URI
			},
		})
		if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
			t.Fatalf("resources capability %+v: no subscribe", caps.Resources)
		}
		if err := cs.Subscribe(testContext(t), &mcp.SubscribeParams{URI: configURI}); err != nil {
			t.Fatal(err)
		}
		callTool(t, cs, "add_tool", map[string]any{"name": "sub1"})
		if got := receive(t, updated, "resources/updated"); got != configURI {
			t.Fatalf("updated %q, want %s", got, configURI)
		}
		var cfg demoConfig
		c := read(t, cs, configURI)
		if err := json.Unmarshal([]byte(c.Text), &cfg); err != nil || !slices.Equal(cfg.ExtraTools, []string{"extra_sub1"}) {
			t.Fatalf("config.json after add_tool: %v %+v", err, cfg)
		}
		list, err := cs.ListResources(testContext(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.Resources {
			if r.URI == configURI && r.Size != int64(len(c.Text)) {
				t.Errorf("listed size %d, read %d bytes", r.Size, len(c.Text))
			}
		}
		if err := cs.Unsubscribe(testContext(t), &mcp.UnsubscribeParams{URI: configURI}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSubscribeRefusesStaticResources: a resource that never changes cannot be subscribed
// to with resources/subscribe; the refusal names the one that can.
func TestSubscribeRefusesStaticResources(t *testing.T) {
	cs := connectMemory(t, New(Options{}), nil, "2025-11-25")
	err := cs.Subscribe(testContext(t), &mcp.SubscribeParams{URI: readmeURI})
	if err == nil || !strings.Contains(err.Error(), "only demo://config.json can be subscribed to") {
		t.Fatalf("subscribe to %s: %v", readmeURI, err)
	}
}
