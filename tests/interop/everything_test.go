//go:build unix

package interop

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/testkit/regtest"
)

// serverName is the plugin's local name for the reference server.
const serverName = "everything"

// What the pinned version (package.json) serves to a client that advertises no
// capabilities, as this plugin's client does.
var (
	// startupTools are registered when the server starts.
	startupTools = []string{
		"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
		"get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
		"toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation",
	}
	// lateTools are registered when the client's notifications/initialized arrives, followed
	// by notifications/tools/list_changed. The server registers more there (get-roots-list,
	// the sampling and elicitation triggers) only for clients that offer roots, sampling or
	// elicitation.
	lateTools = []string{"simulate-research-query"}
)

const (
	// wantResources are the static documents under demo://resource/static/document/.
	wantResources = 7
	// wantTemplates are demo://resource/dynamic/{text,blob}/{resourceId}.
	wantTemplates = 2
	// longOperation is trigger-long-running-operation's duration in the cancellation test,
	// in seconds; cancelDeadline bounds the wait for the cancelled call, far below it.
	longOperation  = 60
	cancelDeadline = 30 * time.Second
)

// TestEverything runs the interop checks against the reference server over stdio and over
// Streamable HTTP: one direct connection per transport for the ordinary checks, and one
// through a tap for the list_changed and cancellation checks.
func TestEverything(t *testing.T) {
	srv := locate(t)
	t.Logf("%s %s, node %s", packageName, srv.version, srv.node)

	t.Run("stdio", func(t *testing.T) {
		cfg := newConfig(mcpclient.TransportStdio)
		cfg.Command = srv.node
		cfg.Args = []string{srv.entry, "stdio"}
		testDirect(t, srv, cfg)
		t.Run("tapped", func(t *testing.T) {
			p, cfg := stdioTap(t, srv)
			testTapped(t, p, cfg)
		})
	})

	t.Run("streamable-http", func(t *testing.T) {
		h := startHTTPServer(t, srv)
		cfg := newConfig(mcpclient.TransportStreamableHTTP)
		cfg.URL = h.url
		testDirect(t, srv, cfg)
		t.Run("tapped", func(t *testing.T) {
			p, endpoint := httpTap(t, h.url)
			cfg := newConfig(mcpclient.TransportStreamableHTTP)
			cfg.URL = endpoint
			testTapped(t, p, cfg)
		})
	})
}

// newConfig is the plugin configuration for the reference server over transport, with the
// defaults and a strict startup (a failed first connection fails the mount).
func newConfig(transport string) mcpclient.Config {
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName = serverName
	cfg.Transport = transport
	cfg.FailOnStartupError = true
	return cfg
}

// public is the registry name of the server's raw tool name.
func public(raw string) string { return mcpclient.PublicToolName(serverName, raw) }

// env is a root with the tools service, the system prompt, the MCP resources service and
// one MCP client.
type env struct {
	root    *ctx.Context
	reg     *toolregistry.Registry
	prompt  *sysprompt.Service
	changes *ctxtest.Recorder[toolregistry.Change]
	client  *ctx.Scope
}

// mount builds an env whose client has cfg and waits for its first connection.
func mount(t *testing.T, cfg mcpclient.Config) *env {
	t.Helper()
	return mountOn(t, ctxtest.New(t), cfg)
}

// mountOn is mount on a given root, for tests that listen to its events first.
func mountOn(t *testing.T, root *ctx.Context, cfg mcpclient.Config) *env {
	t.Helper()
	ctxtest.MountActive(t, root, toolregistry.Plugin, nil)
	ctxtest.MountActive(t, root, sysprompt.Plugin, nil)
	ctxtest.MountActive(t, root, mcpresources.Plugin, nil)
	e := &env{root: root, changes: ctxtest.Record(t, root, toolregistry.Changed)}
	var ok bool
	if e.reg, ok = toolregistry.Key.Get(root); !ok {
		t.Fatal("no tools service")
	}
	if e.prompt, ok = sysprompt.Key.Get(root); !ok {
		t.Fatal("no systemPrompt service")
	}
	e.client = ctxtest.Mount(t, root, mcpclient.Plugin, cfg)
	if err := e.client.Wait(ctxtest.Wait(t)); err != nil {
		t.Fatalf("mcpclient activation: %v", err)
	}
	ctxtest.Settle(t, root)
	ctxtest.RequireState(t, e.client, ctx.Active)
	return e
}

// serverTools returns the registry names of the client's tools visible from the root.
func (e *env) serverTools() []string {
	var out []string
	for _, in := range e.reg.List(e.root) {
		if in.Meta["server"] == serverName {
			out = append(out, in.Name)
		}
	}
	slices.Sort(out)
	return out
}

// call executes a tool from the root and fails the test unless it succeeds.
func (e *env) call(t *testing.T, name, args string) *toolregistry.Result {
	t.Helper()
	res, err := e.reg.Execute(e.root, e.root, name, json.RawMessage(args), toolregistry.ExecOptions{})
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return res
}

// testDirect checks tools, results, instructions and resources on a plain connection.
func testDirect(t *testing.T, srv server, cfg mcpclient.Config) {
	e := mount(t, cfg)

	t.Run("tools listed under public names", func(t *testing.T) {
		var want []string
		for _, raw := range slices.Concat(startupTools, lateTools) {
			name := public(raw)
			if name != "mcp__"+serverName+"__"+raw {
				t.Errorf("public name of %q is %q", raw, name)
			}
			want = append(want, name)
		}
		slices.Sort(want)
		// The late tools are normally in the first listing already (the server registers
		// them while handling notifications/initialized, before the client's tools/list);
		// if not, they come with the refresh that its list_changed triggers.
		var got []string
		defer func() {
			if t.Failed() {
				t.Logf("tools of %s: %v\nwant: %v", serverName, got, want)
			}
		}()
		e.changes.WaitFor(t, func([]toolregistry.Change) bool {
			got = e.serverTools()
			return slices.Equal(got, want)
		})
		for _, raw := range slices.Concat(startupTools, lateTools) {
			in, ok := e.reg.Lookup(e.root, public(raw))
			if !ok || in.Meta["mcpTool"] != raw || in.Owner != "mcp:"+serverName {
				t.Errorf("%s: %+v (found %v), want mcpTool %q owned by mcp:%s", public(raw), in, ok, raw, serverName)
			}
		}
		for _, name := range []string{mcpresources.ToolList, mcpresources.ToolTemplates, mcpresources.ToolRead} {
			if _, ok := e.reg.Lookup(e.root, name); !ok {
				t.Errorf("resource tool %s is not registered", name)
			}
		}
	})

	t.Run("echo", func(t *testing.T) {
		res := e.call(t, public("echo"), `{"message":"hello from the harness"}`)
		if got, want := res.Text(), "Echo: hello from the harness"; got != want {
			t.Fatalf("echo: %q, want %q", got, want)
		}
		if !json.Valid(res.Raw) || !bytes.Contains(res.Raw, []byte(`"Echo: hello from the harness"`)) {
			t.Fatalf("canonical result: %s", res.Raw)
		}
	})

	t.Run("get-sum", func(t *testing.T) {
		res := e.call(t, public("get-sum"), `{"a":2,"b":40}`)
		if got, want := res.Text(), "The sum of 2 and 40 is 42."; got != want {
			t.Fatalf("get-sum: %q, want %q", got, want)
		}
		// The server's input schema is enforced by the registry before any request.
		_, err := e.reg.Execute(e.root, e.root, public("get-sum"), json.RawMessage(`{"a":"two","b":40}`), toolregistry.ExecOptions{})
		if !errors.Is(err, toolregistry.ErrInvalidArgs) {
			t.Fatalf("get-sum with a string: %v, want invalid arguments", err)
		}
	})

	t.Run("get-tiny-image", func(t *testing.T) {
		res := e.call(t, public("get-tiny-image"), `{}`)
		var images []toolregistry.Content
		for _, c := range res.Content {
			if c.Type == toolregistry.ContentImage {
				images = append(images, c)
			}
		}
		if len(images) != 1 || images[0].Attachment == nil {
			t.Fatalf("want one image block with an attachment, got %+v", res.Content)
		}
		att := *images[0].Attachment
		if att.MediaType != "image/png" {
			t.Fatalf("attachment media type %q", att.MediaType)
		}
		data, mediaType, ok := e.reg.Attachments().Get(att.ID)
		if !ok || mediaType != "image/png" || len(data) != att.Size {
			t.Fatalf("attachment %s in the store: found %v, %q, %d bytes; want image/png, %d bytes", att.ID, ok, mediaType, len(data), att.Size)
		}
		if !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
			t.Fatalf("attachment %s is not a PNG: % x", att.ID, data[:min(len(data), 8)])
		}
		// The stored bytes are the ones the server sent (base64 in the canonical result).
		var raw struct {
			Content []struct {
				Type string `json:"type"`
				Data string `json:"data"`
			} `json:"content"`
		}
		if err := json.Unmarshal(res.Raw, &raw); err != nil {
			t.Fatal(err)
		}
		var sent []byte
		for _, c := range raw.Content {
			if c.Type == "image" {
				var err error
				if sent, err = base64.StdEncoding.DecodeString(c.Data); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !bytes.Equal(sent, data) {
			t.Fatalf("stored %d bytes, the server sent %d", len(data), len(sent))
		}
		text := res.Text()
		for _, want := range []string{"Here's the image you requested:", att.String(), "The image above is the MCP logo."} {
			if !strings.Contains(text, want) {
				t.Errorf("model text lacks %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, base64.StdEncoding.EncodeToString(data[:24])) {
			t.Errorf("model text contains the image's base64:\n%s", text)
		}
	})

	t.Run("instructions in the prompt", func(t *testing.T) {
		// The server reads its instructions from docs/instructions.md.
		doc, err := os.ReadFile(filepath.Join(filepath.Dir(srv.entry), "docs", "instructions.md"))
		if err != nil {
			t.Fatal(err)
		}
		instructions := strings.TrimRight(string(doc), " \t\r\n")
		p, err := e.prompt.Assemble(e.root, nil)
		if err != nil {
			t.Fatal(err)
		}
		sections := make(map[string]sysprompt.Rendered)
		for _, s := range p.Sections {
			sections[s.Name] = s
		}
		s, ok := sections["mcp:"+serverName]
		if !ok {
			t.Fatalf("no section mcp:%s in the prompt; sections %v", serverName, slices.Sorted(maps.Keys(sections)))
		}
		if !strings.Contains(s.Text, serverName) || !strings.Contains(s.Text, instructions) {
			t.Fatalf("section mcp:%s does not attribute the server's instructions:\n%s", serverName, s.Text)
		}
		if p.Text[s.Start:s.End] != s.Text {
			t.Fatal("the section's offsets do not match the prompt text")
		}
		if r, ok := sections[mcpresources.SectionName]; !ok || !strings.Contains(r.Text, `"`+serverName+`"`) {
			t.Fatalf("section %s does not list %q: %q", mcpresources.SectionName, serverName, r.Text)
		}
	})

	t.Run("resources", func(t *testing.T) {
		uris := listAll(t, e, mcpresources.ToolList, "resources", "uri")
		if len(uris) != wantResources {
			t.Fatalf("%d resources, want %d: %v", len(uris), wantResources, uris)
		}
		for _, uri := range uris {
			if !strings.HasPrefix(uri, "demo://resource/static/document/") {
				t.Errorf("unexpected resource %q", uri)
			}
		}
		templates := listAll(t, e, mcpresources.ToolTemplates, "resourceTemplates", "uriTemplate")
		slices.Sort(templates)
		want := []string{"demo://resource/dynamic/blob/{resourceId}", "demo://resource/dynamic/text/{resourceId}"}
		if len(templates) != wantTemplates || !slices.Equal(templates, want) {
			t.Fatalf("templates %v, want %v", templates, want)
		}
	})

	t.Run("read text resource", func(t *testing.T) {
		const uri = "demo://resource/static/document/instructions.md"
		doc, err := os.ReadFile(filepath.Join(filepath.Dir(srv.entry), "docs", "instructions.md"))
		if err != nil {
			t.Fatal(err)
		}
		res := e.call(t, mcpresources.ToolRead, `{"server":"`+serverName+`","uri":"`+uri+`"}`)
		contents := readContents(t, res)
		if len(contents) != 1 || contents[0].URI != uri || contents[0].MIMEType != "text/markdown" || contents[0].Text != string(doc) {
			t.Fatalf("read %s: %s", uri, res.Structured)
		}
		if !strings.HasPrefix(res.Text(), "MCP server: "+serverName+"\n") || !strings.Contains(res.Text(), "Everything Server") {
			t.Fatalf("model text:\n%s", res.Text())
		}
	})

	t.Run("read blob resource", func(t *testing.T) {
		const uri = "demo://resource/dynamic/blob/1"
		res := e.call(t, mcpresources.ToolRead, `{"server":"`+serverName+`","uri":"`+uri+`"}`)
		contents := readContents(t, res)
		if len(contents) != 1 || contents[0].URI != uri || contents[0].Blob == "" {
			t.Fatalf("read %s: %s", uri, res.Structured)
		}
		data, err := base64.StdEncoding.DecodeString(contents[0].Blob)
		if err != nil || !strings.HasPrefix(string(data), "Resource 1: This is a base64 blob") {
			t.Fatalf("blob %q: %q, %v", contents[0].Blob, data, err)
		}
		// The canonical result keeps the blob; the model sees its size, never the base64.
		text := res.Text()
		if strings.Contains(text, contents[0].Blob) || strings.Contains(text, contents[0].Blob[:16]) {
			t.Fatalf("the model text dumps the blob:\n%s", text)
		}
		if desc := fmt.Sprintf("[binary blob: %d bytes, %s]", len(data), contents[0].MIMEType); !strings.Contains(text, desc) {
			t.Fatalf("the model text does not describe the blob as %q:\n%s", desc, text)
		}
	})
}

// testTapped checks, on a connection through a tap, that the late tools arrive through
// tools/list_changed and that cancelling a long call ends it promptly.
func testTapped(t *testing.T, p *tap, cfg mcpclient.Config) {
	e := mount(t, cfg)
	owner := "mcp:" + serverName

	t.Run("late tools arrive through list_changed", func(t *testing.T) {
		var late []string
		for _, raw := range lateTools {
			late = append(late, public(raw))
		}
		slices.Sort(late)
		var ours []toolregistry.Change
		defer func() {
			if t.Failed() {
				t.Logf("changes of %s: %+v\ntap: %v", owner, ours, p.all())
			}
		}()
		e.changes.WaitFor(t, func(chs []toolregistry.Change) bool {
			ours = ours[:0]
			for _, ch := range chs {
				if ch.Owner == owner {
					ours = append(ours, ch)
				}
			}
			return len(ours) >= 2
		})
		// The first discovery ran while notifications/initialized was held: startup tools only.
		var startup []string
		for _, raw := range startupTools {
			startup = append(startup, public(raw))
		}
		slices.Sort(startup)
		if !slices.Equal(ours[0].Added, startup) || len(ours[0].Removed) > 0 {
			t.Fatalf("first registration %+v, want exactly the startup tools %v", ours[0], startup)
		}
		// Then the server registered the late tools and said so; the refresh added them.
		if !slices.Equal(ours[1].Added, late) || len(ours[1].Removed) > 0 || len(ours[1].Updated) > 0 {
			t.Fatalf("second change %+v, want exactly the late tools %v added", ours[1], late)
		}
		for _, name := range late {
			if _, ok := e.reg.Lookup(e.root, name); !ok {
				t.Fatalf("%s is not visible", name)
			}
		}
		// The tap shows the order: notification held, first tools/list, notification
		// delivered, then the client's second tools/list, driven by list_changed.
		evs := p.waitFor(t, "a tools/list after the delivery of notifications/initialized", func(evs []event) bool {
			released := slices.IndexFunc(evs, func(ev event) bool { return ev.Released })
			return released >= 0 && slices.ContainsFunc(evs[released:], func(ev event) bool { return ev.Method == "tools/list" })
		})
		held := slices.IndexFunc(evs, func(ev event) bool { return ev.Held })
		firstList := slices.IndexFunc(evs, func(ev event) bool { return ev.Method == "tools/list" })
		released := slices.IndexFunc(evs, func(ev event) bool { return ev.Released })
		if held < 0 || firstList < held || released < firstList {
			t.Fatalf("tap events %v: want notifications/initialized held, then tools/list, then the release", evs)
		}
		for _, ev := range evs {
			if ev.Err != "" {
				t.Fatalf("tap error: %v", ev)
			}
		}
	})

	t.Run("cancel trigger-long-running-operation", func(t *testing.T) {
		const raw = "trigger-long-running-operation"
		callcx, cancel := context.WithCancel(context.Background())
		defer cancel()
		args := fmt.Sprintf(`{"duration":%d,"steps":1}`, longOperation)
		done := regtest.Start(callcx, e.reg, e.root, public(raw), json.RawMessage(args), toolregistry.ExecOptions{})
		isCall := func(ev event) bool { return ev.Method == "tools/call" && ev.Tool == raw }
		p.waitFor(t, "the tools/call of "+raw, func(evs []event) bool { return slices.ContainsFunc(evs, isCall) })
		cancel()

		deadline := time.NewTimer(cancelDeadline)
		defer deadline.Stop()
		var o regtest.Outcome
		select {
		case o = <-done:
		case <-deadline.C:
			t.Fatalf("the cancelled call had not returned %v after the cancellation (the operation lasts %ds)", cancelDeadline, longOperation)
		}
		var terr *toolregistry.ToolError
		if !errors.As(o.Err, &terr) || terr.Code != toolregistry.CodeCancelled {
			t.Fatalf("cancelled call: %v, want a %s tool error", o.Err, toolregistry.CodeCancelled)
		}
		if strings.HasPrefix(terr.Msg, "cancelled before dispatch") {
			t.Fatalf("the call never reached the server: %v", terr)
		}
		if o.Res == nil || !o.Res.IsError {
			t.Fatalf("cancelled call result %+v, want an error result", o.Res)
		}
		hist := e.reg.History()
		if last := hist[len(hist)-1]; last.Tool != public(raw) || last.Outcome != toolregistry.CodeCancelled {
			t.Fatalf("history records %s as %s", last.Tool, last.Outcome)
		}
		// The server is told, and the connection keeps serving.
		p.waitFor(t, "notifications/cancelled", func(evs []event) bool {
			i := slices.IndexFunc(evs, isCall)
			return slices.ContainsFunc(evs[i:], func(ev event) bool { return ev.Method == "notifications/cancelled" })
		})
		if got := e.call(t, public("echo"), `{"message":"still there"}`).Text(); got != "Echo: still there" {
			t.Fatalf("echo after the cancellation: %q", got)
		}
	})
}

// listAll drains one of the resource list tools and returns field of every item of the
// result's key array.
func listAll(t *testing.T, e *env, tool, key, field string) []string {
	t.Helper()
	var out []string
	cursor := ""
	for page := 1; ; page++ {
		args := map[string]string{"server": serverName}
		if cursor != "" {
			args["cursor"] = cursor
		}
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		res := e.call(t, tool, string(b))
		if !strings.HasPrefix(res.Text(), "MCP server: "+serverName+"\n") {
			t.Fatalf("%s: model text %q", tool, res.Text())
		}
		var list map[string]json.RawMessage
		if err := json.Unmarshal(res.Structured, &list); err != nil {
			t.Fatalf("%s: %s: %v", tool, res.Structured, err)
		}
		var items []map[string]any
		if err := json.Unmarshal(list[key], &items); err != nil {
			t.Fatalf("%s: %s: %v", tool, res.Structured, err)
		}
		for _, it := range items {
			s, _ := it[field].(string)
			out = append(out, s)
		}
		if err := json.Unmarshal(list["nextCursor"], &cursor); list["nextCursor"] == nil || err != nil || cursor == "" {
			return out
		}
		if page == 100 {
			t.Fatalf("%s: more than 100 pages", tool)
		}
	}
}

// content is one item of a resources/read result.
type content struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType"`
	Text     string `json:"text"`
	Blob     string `json:"blob"`
}

func readContents(t *testing.T, res *toolregistry.Result) []content {
	t.Helper()
	var r struct {
		Contents []content `json:"contents"`
	}
	if err := json.Unmarshal(res.Structured, &r); err != nil {
		t.Fatalf("read result %s: %v", res.Structured, err)
	}
	return r.Contents
}
