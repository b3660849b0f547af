package host

import (
	"strings"

	"github.com/cordisgo/harness/profiles"
)

// WorkspaceServer is the name of the workspace server (harness workspace-server, package
// workspace): the agent's files and shell.
const WorkspaceServer = "workspace"

// WorkspaceRow is the row that mounts the workspace server as the MCP server "workspace",
// rooted in the host's working directory, through the binary at self, with env added to
// its environment. It is what a profile writes to mount it itself (docs/workspace.md), and
// what [WithWorkspaceRow] adds.
func WorkspaceRow(self string, env map[string]string) profiles.Row {
	cfg := map[string]any{"serverName": WorkspaceServer, "transport": "stdio", "command": self, "args": []any{"workspace-server"}}
	if len(env) > 0 {
		m := make(map[string]any, len(env))
		for k, v := range env {
			m[k] = v
		}
		cfg["env"] = m
	}
	return profiles.Row{ID: WorkspaceServer, Use: UseClient, Enabled: true, Path: "plugins." + WorkspaceServer, Config: cfg}
}

// WithWorkspaceRow returns rows with the workspace row added when an agent runs at their
// top level and nothing says otherwise: it is not added when self (the binary that serves
// it) is unknown, when the rows have no enabled top-level agent, when a top-level row is
// called workspace (the profile's own, or one it switched off to leave the workspace out),
// or when an enabled MCP client already serves under the name workspace.
func WithWorkspaceRow(rows []profiles.Row, self string, env map[string]string) []profiles.Row {
	if self == "" {
		return rows
	}
	agent := false
	for _, r := range rows {
		switch {
		case strings.EqualFold(r.ID, WorkspaceServer):
			return rows
		case r.Enabled && r.Use == UseClient && r.Config["serverName"] == WorkspaceServer:
			return rows
		case r.Enabled && r.Use == UseAgent:
			agent = true
		}
	}
	if !agent {
		return rows
	}
	return append(append([]profiles.Row(nil), rows...), WorkspaceRow(self, env))
}
