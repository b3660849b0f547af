package serverdoc_test

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/serverdoc"
)

// Another host's server list is read directly: here VS Code's mcp.json, whose input becomes
// a secret reference and whose envFile has no counterpart.
func ExampleRead() {
	doc := `{
	"inputs": [{"type": "promptString", "id": "gh-pat", "password": true}],
	"servers": {
		"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
			"headers": {"Authorization": "Bearer ${input:gh-pat}"}},
		"fs": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"], "envFile": ".env"},
	},
}`
	servers, err := serverdoc.Read([]byte(doc), serverdoc.ReadOptions{Source: "mcp.json"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(servers.Dialect)
	for _, s := range servers.Servers {
		fmt.Println(s.Name, s.Config.Transport, s.Config.Headers)
	}
	for _, w := range servers.Warnings {
		fmt.Println("warning:", w)
	}
	// Output:
	// vscode
	// github streamable-http map[Authorization:Bearer ${secret:gh-pat}]
	// fs stdio map[]
	// warning: key "servers.github.headers.Authorization": ${input:gh-pat} becomes ${secret:gh-pat}: put the value under "gh-pat" in the credentials file (credentials.yaml, mode 0600)
	// warning: key "servers.fs.envFile": ignored: env files are not read: list the variables under env
}

// EntryNode writes what differs from the defaults, in the configuration's order.
func ExampleEntryNode() {
	cfg := mcpclient.Config{Transport: mcpclient.TransportStreamableHTTP, URL: "https://example.com/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${DOCS_TOKEN}"}}
	cfg.Default()
	cfg.ToolCallTimeoutMs = 5000
	out, _ := yaml.Marshal(serverdoc.EntryNode(cfg, false))
	fmt.Print(string(out))
	// Output:
	// enabled: false
	// transport: streamable-http
	// url: https://example.com/mcp
	// headers:
	//     Authorization: Bearer ${DOCS_TOKEN}
	// toolCallTimeoutMs: 5000
}
