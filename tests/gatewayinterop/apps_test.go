package gatewayinterop

import (
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/gateway"
	"github.com/cordisgo/harness/internal/npmci"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/testkit/gatewaytest"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// appServers is the page's suite of the MCP org's example MCP App servers (pinned once, in
// plugins/remote/web/testdata/appservers).
var appServers = npmci.Suite{Name: "page apps", Dir: "../../plugins/remote/web/testdata/appservers", Prefix: "plugins/remote/web/testdata/appservers"}

// TestTypeScriptClientApps (issue 38, item 6): an MCP App passes through the gateway
// unchanged. server-basic-vanillajs's get-time names its view in _meta.ui; the TypeScript
// SDK client, through the aggregated route and the server's own route, lists the tool with
// the _meta the server gives a client that declares the apps extension (read directly by
// a go-sdk client over stdio), and reads the ui:// resource with the same contents: the
// HTML, its MIME type text/html;profile=mcp-app and its _meta.ui (the CSP the page builds
// the sandbox from).
func TestTypeScriptClientApps(t *testing.T) {
	suite.File(t, "@modelcontextprotocol/sdk/package.json")
	node := appServers.Node(t)
	entry, _ := appServers.Bin(t, "@modelcontextprotocol/server-basic-vanillajs", "mcp-server-basic-vanillajs")

	// What the server says to a client that renders apps, without the gateway.
	c := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Extensions: map[string]any{mcpclient.UIExtension: map[string]any{"mimeTypes": []string{mcpclient.UIMimeType}}}},
	})
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(node, entry, "--stdio")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var direct *mcp.Tool
	for _, tl := range tools.Tools {
		if tl.Name == "get-time" {
			direct = tl
		}
	}
	if direct == nil {
		t.Fatalf("server-basic-vanillajs has no get-time: %v", tools.Tools)
	}
	ui, _ := direct.Meta["ui"].(map[string]any)
	uri, _ := ui["resourceUri"].(string)
	if uri == "" {
		t.Fatalf("get-time names no view: _meta %v", direct.Meta)
	}
	page, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Contents) != 1 || page.Contents[0].MIMEType != mcpclient.UIMimeType || len(page.Contents[0].Text) < 100 {
		t.Fatalf("the view %s read directly: %+v", uri, page.Contents)
	}

	// The same server behind the gateway.
	root := gatewaytest.Tree(t, gatewaytest.TreeOptions{Offer: true}) // as harness serve does, before the servers
	var cfg mcpclient.Config
	cfg.Default()
	cfg.ServerName, cfg.Transport, cfg.Command, cfg.Args, cfg.FailOnStartupError = "basic", mcpclient.TransportStdio, node, []string{entry, "--stdio"}, true
	ctxtest.MountActive(t, root, mcpclient.Plugin, cfg)
	_, base := gatewaytest.Serve(t, root, gateway.Options{}, gateway.HTTPOptions{Token: token, Addr: "127.0.0.1:0"})

	want, _ := json.Marshal(direct.Meta)
	wantPage, _ := json.Marshal(page.Contents)
	for _, route := range []struct{ path, tool string }{{"/mcp", "mcp__basic__get-time"}, {"/mcp/servers/basic", "get-time"}} {
		out := ts(t, base+route.path, op("tools/list", map[string]any{}), op("resources/read", map[string]any{"uri": uri}), op("resources/list", map[string]any{}))
		contains(t, route.path+" resources/list", out.Results[2], `"uri":"`+uri+`"`)
		var list struct {
			Tools []struct {
				Name string          `json:"name"`
				Meta json.RawMessage `json:"_meta"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(out.Results[0], &list); err != nil {
			t.Fatalf("%s: tools/list: %v: %s", route.path, err, out.Results[0])
		}
		found := false
		for _, tl := range list.Tools {
			if tl.Name == route.tool {
				found = true
				if len(tl.Meta) == 0 || !mcptest.SameJSON(t, tl.Meta, want) {
					t.Errorf("%s: %s's _meta %s, the server's %s", route.path, tl.Name, tl.Meta, want)
				}
			}
		}
		if !found {
			t.Errorf("%s lists no %s: %.600s", route.path, route.tool, out.Results[0])
		}
		var read struct {
			Contents json.RawMessage `json:"contents"`
		}
		if err := json.Unmarshal(out.Results[1], &read); err != nil || len(read.Contents) == 0 {
			t.Fatalf("%s: resources/read %s: %v: %.600s", route.path, uri, err, out.Results[1])
		}
		if !mcptest.SameJSON(t, read.Contents, wantPage) {
			t.Errorf("%s: the view %s read through the gateway differs from the server's:\n%.400s\nwant\n%.400s", route.path, uri, read.Contents, wantPage)
		}
	}
}
