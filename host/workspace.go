package host

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/catalog"
	"github.com/cordisgo/harness/profiles"
	"github.com/cordisgo/harness/workspace"
)

// WorkspaceServer is the name of the workspace server (harness workspace-server, package
// workspace): the agent's files and shell.
const WorkspaceServer = "workspace"

// workspaceIdleMs is the idle timeout of the workspace row the host adds: the largest
// idleTimeoutMs, so that once a call has started the server it runs until the host ends (its
// background jobs and what the agent read live in it).
const workspaceIdleMs = 2_147_483_647

// WorkspaceRow is the row that mounts the workspace server as the MCP server "workspace",
// rooted in root ("" is the working directory of the server's process), through the binary
// at self, with env added to its environment. It starts lazily: its tools come from the MCP
// catalog cache and the process starts at the first call (see [WithWorkspaceRow] for the
// cache's first entry), then runs until the host ends. It is what [WithWorkspaceRow] adds.
func WorkspaceRow(self, root string, env map[string]string) profiles.Row {
	args := []any{"workspace-server"}
	if root != "" {
		args = append(args, "--root", root)
	}
	cfg := map[string]any{"serverName": WorkspaceServer, "transport": "stdio", "command": self, "args": args,
		"startup": mcpclient.StartupLazy, "idleTimeoutMs": workspaceIdleMs}
	if len(env) > 0 {
		m := make(map[string]any, len(env))
		for k, v := range env {
			m[k] = v
		}
		cfg["env"] = m
	}
	return profiles.Row{ID: WorkspaceServer, Use: UseClient, Enabled: true, Path: "plugins." + WorkspaceServer, Config: cfg}
}

// WithWorkspaceRow returns rows with the workspace row added (rooted in root) when an agent
// runs at their top level and nothing says otherwise: it is not added when self (the binary
// that serves it) is unknown, when the rows have no enabled top-level agent, when a
// top-level row is called workspace (the profile's own, or one it switched off to leave the
// workspace out), or when an enabled MCP client already serves under the name workspace.
// added reports whether it was.
func WithWorkspaceRow(rows []profiles.Row, self, root string, env map[string]string) (out []profiles.Row, added bool) {
	if self == "" {
		return rows, false
	}
	agent := false
	for _, r := range rows {
		switch {
		case strings.EqualFold(r.ID, WorkspaceServer):
			return rows, false
		case r.Enabled && r.Use == UseClient && r.Config["serverName"] == WorkspaceServer:
			return rows, false
		case r.Enabled && r.Use == UseAgent:
			agent = true
		}
	}
	if !agent {
		return rows, false
	}
	return append(append([]profiles.Row(nil), rows...), WorkspaceRow(self, root, env)), true
}

// seedWorkspace writes the catalog cache entry of row, the workspace row the host added
// rooted in root, when the cache has no file for its configuration: the lists of the same
// server made in process (workspaceCatalog), so that the lazy row registers its tools without starting
// the process even on a first run. Without a catalog cache it does nothing (the row then
// starts once at mount, as any lazy server without an entry). A failure is logged: the row
// starts to fill the cache itself.
func (h *Host) seedWorkspace(row profiles.Row, root string) {
	store, ok := catalog.Key.Get(h.root)
	if !ok || store == nil {
		return
	}
	err := func() error {
		def, ok := h.catalog[UseClient]
		if !ok {
			return nil
		}
		v, err := def.DecodeConfig(row.Config)
		if err != nil {
			return err
		}
		cfg, ok := v.(mcpclient.Config)
		if !ok {
			return fmt.Errorf("the %s row's configuration is a %T", UseClient, v)
		}
		hash, err := cfg.CatalogHash()
		if err != nil {
			return err
		}
		if store.Has(cfg.ServerName, hash) {
			return nil // an unusable file makes the row start and list its tools afresh
		}
		e, err := workspaceCatalog(context.Background(), root)
		if err != nil {
			return err
		}
		e.ConfigHash = hash
		return store.Save(cfg.ServerName, e)
	}()
	if err != nil {
		h.logger.Debug("the workspace's catalog entry was not seeded; it starts to list its tools", "err", err)
	}
}

// workspaceCatalog returns the catalog entry of a workspace server rooted in root (""
// the working directory) in its default mode, as its process would list it: the server is
// made in process and listed over an in-memory session, then closed.
func workspaceCatalog(cx context.Context, root string) (*catalog.Server, error) {
	ws, err := workspace.New(workspace.Options{Root: root})
	if err != nil {
		return nil, err
	}
	defer func() { _ = ws.Close() }()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := ws.MCP().Connect(cx, st, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ss.Close() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "harness"}, nil).Connect(cx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cs.Close() }()
	e := &catalog.Server{Tools: []*mcp.Tool{}}
	if init := cs.InitializeResult(); init != nil {
		e.ServerInfo, e.ProtocolVersion, e.Instructions = init.ServerInfo, init.ProtocolVersion, init.Instructions
	}
	for t, err := range cs.Tools(cx, nil) {
		if err != nil {
			return nil, err
		}
		e.Tools = append(e.Tools, t)
	}
	return e, nil
}

// workingDir is the root of the workspace the host adds: the host's working directory,
// or "" (the server's own) when it cannot be had.
func workingDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	return dir
}
