package gateway

import (
	"strings"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

// offered reports whether downstream clients are offered the registry tool in. The
// agent's own tools (Meta "harness": "agent": read_tool_result, which reads what the
// agent's sessions saved, and the subagent tools agent__NAME) are for the agent's models:
// a client of the gateway has no session of the agent to read from or delegate in.
func offered(in toolregistry.Info) bool { return in.Meta["harness"] != "agent" }

// mcpPrefix starts the public name of an MCP server's tool (mcp__SERVER__TOOL).
const mcpPrefix = "mcp__"

// shortNames returns the tools a scope route shows with Options.ShortNames: an MCP
// server's tool mcp__SERVER__TOOL is shown as SERVER__TOOL, unless another tool of infos
// is named so (that one keeps its name, and the MCP tool its prefix). Other agents add a
// prefix of their own (mcp__harness__…), so the gateway's would be said twice. alias maps
// each shortened name to the registry's; infos is not modified.
func shortNames(infos []toolregistry.Info) (shown []toolregistry.Info, alias map[string]string) {
	taken := make(map[string]bool, len(infos))
	for _, in := range infos {
		taken[in.Name] = true
	}
	shown = make([]toolregistry.Info, 0, len(infos))
	alias = map[string]string{}
	for _, in := range infos {
		if server := in.Meta["server"]; server != "" && strings.HasPrefix(in.Name, mcpPrefix+server+"__") {
			if short := strings.TrimPrefix(in.Name, mcpPrefix); !taken[short] {
				alias[short] = in.Name
				in.Name = short
			}
		}
		shown = append(shown, in)
	}
	return shown, alias
}
