package mcpresources_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpresources"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// listPage is the part of a resources/list or resources/templates/list result the tests read.
type listPage struct {
	Resources []struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
	} `json:"resources"`
	ResourceTemplates []struct {
		URITemplate string `json:"uriTemplate"`
	} `json:"resourceTemplates"`
	NextCursor string `json:"nextCursor"`
}

// readResult is the part of a resources/read result the tests read.
type readResult struct {
	Contents []struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
	} `json:"contents"`
}

func decode[T any](t *testing.T, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return v
}

// requireCanonical checks that a result keeps the provider's JSON, unchanged, as Raw and
// Structured, and that the model text is the header and a JSON value.
func requireCanonical(t *testing.T, res *toolregistry.Result, p *demoProvider) {
	t.Helper()
	last := p.lastResult()
	if !bytes.Equal(res.Raw, last) || !bytes.Equal(res.Structured, last) {
		t.Fatalf("canonical result changed:\nraw        %s\nstructured %s\nprovider   %s", res.Raw, res.Structured, last)
	}
	body, ok := strings.CutPrefix(res.Text(), "MCP server: demo\n")
	if !ok {
		t.Fatalf("model text does not start with the server header: %q", res.Text())
	}
	if !json.Valid([]byte(body)) {
		t.Fatalf("model text after the header is not JSON: %q", body)
	}
}

func TestListPagination(t *testing.T) {
	e := newEnv(t, false)
	p := connectDemo(t)
	e.register(t, "demo", p)

	var uris []string
	cursor := ""
	for page := 0; ; page++ {
		args := `{"server":"demo"}`
		if cursor != "" {
			args = `{"server":"demo","cursor":` + string(must(json.Marshal(cursor))) + `}`
		}
		res := e.mustCall(t, e.root, mcpresources.ToolList, args)
		requireCanonical(t, res, p)
		got := decode[listPage](t, res.Structured)
		if len(got.Resources) > 2 {
			t.Fatalf("page %d has %d resources with page size 2", page, len(got.Resources))
		}
		for _, r := range got.Resources {
			uris = append(uris, r.URI)
		}
		if got.NextCursor != "" && !strings.Contains(res.Text(), got.NextCursor) {
			t.Fatalf("the model text hides the cursor %q: %s", got.NextCursor, res.Text())
		}
		if got.NextCursor == "" {
			if page == 0 {
				t.Fatal("the demo server's three resources fit in one page of 2")
			}
			break
		}
		cursor = got.NextCursor
	}
	slices.Sort(uris)
	if want := []string{"demo://config.json", "demo://logo.png", "demo://readme"}; !slices.Equal(uris, want) {
		t.Fatalf("listed %v, want %v", uris, want)
	}
	reqs := p.requests()
	if len(reqs) != 2 || reqs[0] != (mcpresources.Request{Method: mcpresources.MethodList}) ||
		reqs[1] != (mcpresources.Request{Method: mcpresources.MethodList, Cursor: cursor}) {
		t.Fatalf("provider received %+v, want the first page then the cursor %q unchanged", reqs, cursor)
	}

	res := e.mustCall(t, e.root, mcpresources.ToolTemplates, `{"server":"demo"}`)
	requireCanonical(t, res, p)
	tpl := decode[listPage](t, res.Structured)
	if len(tpl.ResourceTemplates) != 1 || tpl.ResourceTemplates[0].URITemplate != "demo://notes/{id}" {
		t.Fatalf("templates: %s", res.Structured)
	}
	if !strings.Contains(res.Text(), `"uriTemplate":"demo://notes/{id}"`) {
		t.Fatalf("model text: %s", res.Text())
	}
	if got := p.requests()[2]; got != (mcpresources.Request{Method: mcpresources.MethodTemplates}) {
		t.Fatalf("templates request %+v", got)
	}

	// A cursor the server does not know is passed through as is, and the server's error is
	// a tool error naming it.
	_, err := e.call(t, e.root, mcpresources.ToolTemplates, `{"server":"demo","cursor":"no such cursor"}`)
	te := toolError(t, err)
	if te.Code != toolregistry.CodeToolError || !strings.Contains(te.Msg, `MCP resource server "demo": resources/templates/list failed: `) {
		t.Fatalf("bad cursor: %v", err)
	}
	if got := p.requests()[3]; got.Cursor != "no such cursor" {
		t.Fatalf("cursor reached the provider as %q", got.Cursor)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestReadTextAndBlob(t *testing.T) {
	e := newEnv(t, false)
	p := connectDemo(t)
	e.register(t, "demo", p)

	res := e.mustCall(t, e.root, mcpresources.ToolRead, `{"server":"demo","uri":"demo://readme"}`)
	requireCanonical(t, res, p)
	readme := decode[readResult](t, res.Structured)
	if len(readme.Contents) != 1 || !strings.HasPrefix(readme.Contents[0].Text, "# ") {
		t.Fatalf("readme: %s", res.Structured)
	}
	// Text contents are shown to the model in full, as JSON strings.
	if !strings.Contains(res.Text(), string(must(json.Marshal(readme.Contents[0].Text)))) {
		t.Fatalf("the readme's text is not in the model text: %s", res.Text())
	}

	res = e.mustCall(t, e.root, mcpresources.ToolRead, `{"server":"demo","uri":"demo://logo.png"}`)
	requireCanonical(t, res, p)
	logo := decode[readResult](t, res.Structured)
	if len(logo.Contents) != 1 || logo.Contents[0].Blob == "" {
		t.Fatalf("logo: %s", res.Structured)
	}
	png, err := base64.StdEncoding.DecodeString(logo.Contents[0].Blob)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("the canonical blob is not the PNG: %v", err)
	}
	text := res.Text()
	want := `"contents":[{"uri":"demo://logo.png","mimeType":"image/png","blob":"[binary blob: ` +
		string(must(json.Marshal(len(png)))) + ` bytes, image/png]"}]`
	if !strings.HasPrefix(text, "MCP server: demo\n{") || !strings.Contains(text, want) {
		t.Fatalf("model text\n%s\nwant the header and\n%s", text, want)
	}
	if strings.Contains(text, logo.Contents[0].Blob[:16]) {
		t.Fatal("the model text contains base64 data")
	}

	// A URI expanded from the template.
	res = e.mustCall(t, e.root, mcpresources.ToolRead, `{"server":"demo","uri":"demo://notes/42"}`)
	if note := decode[readResult](t, res.Structured); len(note.Contents) != 1 || !strings.HasPrefix(note.Contents[0].Text, "Note 42") {
		t.Fatalf("note: %s", res.Structured)
	}
	if got := p.requests()[2]; got != (mcpresources.Request{Method: mcpresources.MethodRead, URI: "demo://notes/42"}) {
		t.Fatalf("read request %+v", got)
	}

	// The server's own error (an unknown resource) names the server.
	_, err = e.call(t, e.root, mcpresources.ToolRead, `{"server":"demo","uri":"demo://nothing"}`)
	if te := toolError(t, err); te.Code != toolregistry.CodeToolError || !strings.Contains(te.Msg, `MCP resource server "demo": resources/read failed: `) {
		t.Fatalf("unknown resource: %v", err)
	}
}

func TestUnknownServerFailsBeforeRequest(t *testing.T) {
	e := newEnv(t, false)
	demo, docs := &tagProvider{tag: "demo"}, &tagProvider{tag: "docs"}
	e.register(t, "demo", demo)
	ag := ctxtest.Layer("agent", server("docs", docs))
	ctxtest.Mount(t, e.root, ag, nil)
	ctxtest.Settle(t, e.root)

	for _, tc := range []struct{ tool, args string }{
		{mcpresources.ToolList, `{"server":"docs"}`}, // in a sibling (agent) layer
		{mcpresources.ToolTemplates, `{"server":"docs","cursor":"x"}`},
		{mcpresources.ToolRead, `{"server":"nope","uri":"demo://readme"}`},
	} {
		_, err := e.call(t, e.root, tc.tool, tc.args)
		te := toolError(t, err)
		if te.Code != toolregistry.CodeToolError || !errors.Is(err, mcpresources.ErrUnknownServer) ||
			!strings.Contains(te.Msg, `is unavailable in this agent's scope ("root"); visible servers: ["demo"]`) {
			t.Fatalf("%s %s: %v", tc.tool, tc.args, err)
		}
	}

	// Arguments are validated before the service resolves anything.
	for _, tc := range []struct{ tool, args string }{
		{mcpresources.ToolList, `{}`},
		{mcpresources.ToolList, `{"cursor":"c"}`},
		{mcpresources.ToolTemplates, `{"server":""}`},
		{mcpresources.ToolList, `{"server":5}`},
		{mcpresources.ToolRead, `{"server":"demo"}`},
		{mcpresources.ToolRead, `{"uri":"demo://readme"}`},
		{mcpresources.ToolRead, `{"server":"demo","uri":""}`},
	} {
		_, err := e.call(t, e.root, tc.tool, tc.args)
		if te := toolError(t, err); te.Code != toolregistry.CodeInvalidArgs {
			t.Fatalf("%s %s: %v, want invalid arguments", tc.tool, tc.args, err)
		}
	}
	if n := demo.calls.Load() + docs.calls.Load(); n != 0 {
		t.Fatalf("providers were called %d times by failing calls", n)
	}

	// With nothing visible the error says so.
	e2 := newEnv(t, false)
	ag2 := ctxtest.Layer("lonely", server("docs", docs))
	ctxtest.Mount(t, e2.root, ag2, nil)
	sib := ctxtest.Mount(t, e2.root, ctxtest.Layer("sibling"), nil)
	ctxtest.Settle(t, e2.root)
	lonely := active(t, ctxtest.Only(t, e2.root, ag2))
	e2.requireTools(t, active(t, sib), false) // the sibling agent has no resource tools at all
	_, err := e2.call(t, lonely, mcpresources.ToolList, `{"server":"demo"}`)
	if te := toolError(t, err); !strings.Contains(te.Msg, `MCP resource server "demo" is unavailable in this agent's scope ("lonely"); visible servers: ["docs"]`) {
		t.Fatalf("unknown server from the agent: %v", err)
	}
	if n := docs.calls.Load(); n != 0 {
		t.Fatalf("docs was called %d times", n)
	}
}

func TestScopedVisibility(t *testing.T) {
	e := newEnv(t, false)
	e.register(t, "global", &tagProvider{tag: "root"})
	shadow := server("global", &tagProvider{tag: "a-global"})
	inner := ctxtest.Layer("inner")
	a := ctxtest.Layer("a", server("docs", &tagProvider{tag: "a-docs"}), shadow, inner)
	b := ctxtest.Layer("b")
	c := ctxtest.Layer("c", server("other", &tagProvider{tag: "c-other"}))
	for _, def := range []ctx.PluginDef{a, b, c} {
		ctxtest.Mount(t, e.root, def, nil)
	}
	ctxtest.Settle(t, e.root)
	scopes := map[string]*ctx.Context{
		"root":  e.root,
		"a":     active(t, ctxtest.Only(t, e.root, a)),
		"inner": active(t, ctxtest.Only(t, e.root, inner)),
		"b":     active(t, ctxtest.Only(t, e.root, b)),
		"c":     active(t, ctxtest.Only(t, e.root, c)),
	}
	for name, want := range map[string][]string{
		"root":  {"global"},
		"a":     {"docs", "global"},
		"inner": {"docs", "global"},
		"b":     {"global"},
		"c":     {"global", "other"},
	} {
		sc := scopes[name]
		if got := e.svc.Servers(sc); !slices.Equal(got, want) {
			t.Errorf("Servers from %s = %v, want %v", name, got, want)
		}
		e.requireTools(t, sc, true)
	}
	for name, want := range map[string]string{"root": "root", "a": "a-global", "inner": "a-global", "b": "root", "c": "root"} {
		if got := e.answeredBy(t, scopes[name], "global"); got != want {
			t.Errorf("global from %s answered by %s, want %s", name, got, want)
		}
	}
	for _, name := range []string{"root", "b", "c"} {
		if _, err := e.call(t, scopes[name], mcpresources.ToolList, `{"server":"docs"}`); !errors.Is(err, mcpresources.ErrUnknownServer) {
			t.Errorf("docs from %s: %v, want unknown", name, err)
		}
	}
	// Each layer with providers has its own tools; b has none and uses the root's.
	for name, want := range map[string]*ctx.Scope{"a": ctxtest.Only(t, e.root, a), "inner": ctxtest.Only(t, e.root, a), "b": e.root.Scope(), "c": ctxtest.Only(t, e.root, c)} {
		if in, _ := e.reg.Lookup(scopes[name], mcpresources.ToolList); in.Scope != want {
			t.Errorf("the tool seen from %s lives in %v, want %v", name, in.Scope, want)
		}
	}

	// When the agent's own "global" goes, the root's takes over for it.
	if err := ctxtest.Only(t, e.root, shadow).Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
	ctxtest.Settle(t, e.root)
	if got := e.answeredBy(t, scopes["inner"], "global"); got != "root" {
		t.Fatalf("global from inner answered by %s after the agent's went, want root", got)
	}
}

func TestAgentOnlyTools(t *testing.T) {
	e := newEnv(t, false)
	inner := ctxtest.Layer("inner")
	a := ctxtest.Layer("a", server("docs", &tagProvider{tag: "docs"}), inner)
	b := ctxtest.Layer("b")
	ctxtest.Mount(t, e.root, a, nil)
	ctxtest.Mount(t, e.root, b, nil)
	ctxtest.Settle(t, e.root)
	e.requireTools(t, e.root, false)
	e.requireTools(t, active(t, ctxtest.Only(t, e.root, b)), false)
	e.requireTools(t, active(t, ctxtest.Only(t, e.root, a)), true)
	in := active(t, ctxtest.Only(t, e.root, inner))
	e.requireTools(t, in, true)
	if got := e.answeredBy(t, in, "docs"); got != "docs" {
		t.Fatalf("docs from inner answered by %s", got)
	}
}

func TestProviderErrors(t *testing.T) {
	e := newEnv(t, false)
	p := connectDemo(t)
	e.register(t, "demo", p)
	down := &tagProvider{tag: "down", err: errors.New("mcp-client(down): server is disconnected")}
	e.register(t, "down", down)
	_, err := e.call(t, e.root, mcpresources.ToolList, `{"server":"down"}`)
	te := toolError(t, err)
	if te.Code != toolregistry.CodeToolError || te.Msg != `MCP resource server "down": resources/list failed: mcp-client(down): server is disconnected` {
		t.Fatalf("disconnected server: %v", err)
	}

	// A real session that closed: the call reports the SDK's connection error, and the
	// tools and the name stay (visibility follows the configured provider, not its health).
	if err := p.cs.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := e.call(t, e.root, mcpresources.ToolRead, `{"server":"demo","uri":"demo://readme"}`)
	te = toolError(t, err)
	if te.Code != toolregistry.CodeToolError || !strings.HasPrefix(te.Msg, `MCP resource server "demo": resources/read failed: `) ||
		len(te.Msg) <= len(`MCP resource server "demo": resources/read failed: `) || !res.IsError {
		t.Fatalf("closed session: %v", err)
	}
	if !strings.Contains(res.Text(), te.Msg) {
		t.Fatalf("the model does not see the error: %q", res.Text())
	}
	e.requireTools(t, e.root, true)
	if got := e.svc.Servers(e.root); !slices.Equal(got, []string{"demo", "down"}) {
		t.Fatalf("Servers = %v after failures", got)
	}
}

func TestInvalidProviderResult(t *testing.T) {
	e := newEnv(t, false)
	for name, raw := range map[string]string{"empty": ``, "broken": `{"contents":[`, "trailing": `{} {}`} {
		p := rawProvider(raw)
		e.register(t, name, p)
		_, err := e.call(t, e.root, mcpresources.ToolList, `{"server":"`+name+`"}`)
		if te := toolError(t, err); !strings.Contains(te.Msg, `MCP resource server "`+name+`": resources/list returned an invalid result`) {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

func TestCallerInfo(t *testing.T) {
	e := newEnv(t, false)
	p := connectDemo(t)
	ag := ctxtest.Layer("reviewer", server("demo", p))
	ctxtest.Mount(t, e.root, ag, nil)
	ctxtest.Settle(t, e.root)
	a := active(t, ctxtest.Only(t, e.root, ag))
	_, err := e.reg.Execute(ctxtest.Wait(t), a, mcpresources.ToolRead, json.RawMessage(`{"server":"demo","uri":"demo://readme"}`), toolregistry.ExecOptions{CallID: "call-7"})
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	callers := slices.Clone(p.callers)
	p.mu.Unlock()
	if len(callers) != 1 || callers[0] != (mcpresources.CallerInfo{Scope: "reviewer", CallID: "call-7"}) {
		t.Fatalf("callers %+v", callers)
	}
}
