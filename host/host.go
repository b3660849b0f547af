package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"time"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/plugins/agent"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpclient/catalog"
	"github.com/cordisgo/harness/plugins/remote"
	"github.com/cordisgo/harness/profiles"
	"github.com/cordisgo/harness/sampling"
	"github.com/cordisgo/harness/secrets"
	"github.com/cordisgo/harness/toolsearch"
)

// DefaultShutdownTimeout bounds the disposal of one row that a profile reload removes or
// replaces, when Options.ShutdownTimeout is 0: enough for a stdio server to be asked to
// exit, then killed, and the kill confirmed.
const DefaultShutdownTimeout = 15 * time.Second

// Options configure a Host. The zero value mounts the profile's rows with the built-in
// catalog, without the remote API and the management page's methods, logging to
// slog.Default().
type Options struct {
	// Catalog maps a row's use key to its plugin; nil means Catalog().
	Catalog map[string]ctx.PluginDef
	// Logger is the tree's and the host's logger; nil means slog.Default().
	Logger *slog.Logger
	// Hosting makes a long-running host: the profile's remote rows (UseRemote) mount,
	// publishing the endpoint file other processes find the host by (refused at Mount when
	// a running host already publishes it), and so do its console rows (the management
	// page's methods, with the page's elicitation responder provided before the clients
	// connect). Without it those rows are left out: a one-shot use never takes a running
	// host's endpoint over.
	Hosting bool
	// CatalogDir is the directory of the MCP catalog cache (package plugins/mcpclient/catalog), where the
	// clients keep their servers' lists and lazy servers find their cached tools; "" means
	// none (lazy servers then start once at mount).
	CatalogDir string
	// AdjustRows, if set, changes the profile's rows before they are mounted, at start and
	// at every reload (an agent row added when the profile has none, say).
	AdjustRows func([]profiles.Row) []profiles.Row
	// OnStatus, if set, receives every MCP client's status report as it happens (a live
	// display). It must be quick: clients report on their own goroutines.
	OnStatus func(mcpclient.Status)
	// ShutdownTimeout bounds the disposal of a row a reload removes; 0 means
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Self is the path of the running binary when it serves `workspace-server`: wherever an
	// agent runs, the workspace server is mounted through it (WithWorkspaceRow), lazily:
	// listed from the catalog cache (seeded in process when CatalogDir has no entry yet),
	// started at its first call. Empty means no workspace unless the profile mounts one.
	Self string
	// SelfEnv is added to the environment of the workspace row the host adds (as
	// app.Options.SelfEnv is to the profile's rows that run Self): tests make a re-executed
	// test binary act as the harness with it.
	SelfEnv map[string]string
}

// Host is a profile mounted in a live scope tree: its rows, the status of every MCP client
// (a StatusBoard), the host's remote methods. Make one with New (or Start), then Mount and
// Ready; the tree is disposed with its root (Close). A Host is safe for concurrent use
// once Mount has returned: agent scopes mount their rows on their own goroutines, and the
// remote methods answer on the remote API's.
type Host struct {
	root    *ctx.Context
	profile *profiles.Profile
	opts    Options
	logger  *slog.Logger
	catalog map[string]ctx.PluginDef
	mounts  *mounts
	board   *StatusBoard
	began   time.Time
	// rows are the rows mounted at start-up (the profile's, as mountedRows adjusts them).
	rows []profiles.Row
}

// New returns the host of profile p on root, a root scope (ctx.New) the caller owns:
// nothing is mounted until Mount. p should have passed Check.
func New(root *ctx.Context, p *profiles.Profile, opts Options) *Host {
	h := &Host{root: root, profile: p, opts: opts, logger: opts.Logger, catalog: opts.Catalog,
		mounts: &mounts{}, board: NewStatusBoard(opts.OnStatus)}
	if h.logger == nil {
		h.logger = slog.Default()
	}
	if h.catalog == nil {
		h.catalog = builtins
	}
	return h
}

// Start makes a root scope, mounts p on it (Mount) and waits until cx is done for the tree
// to settle (Ready). A failure to mount disposes what had mounted; a wait cut short is not
// an error. Close disposes the tree.
func Start(cx context.Context, p *profiles.Profile, opts Options) (*Host, error) {
	l := opts.Logger
	if l == nil {
		l = slog.Default()
	}
	h := New(ctx.New(ctx.Options{Logger: l}), p, opts)
	if err := h.Mount(); err != nil {
		if derr := h.root.Scope().Dispose(context.WithoutCancel(cx)); derr != nil {
			err = errors.Join(err, derr)
		}
		return nil, err
	}
	h.Ready(cx)
	return h, nil
}

// Close disposes the tree, bounded by cx.
func (h *Host) Close(cx context.Context) error { return h.root.Scope().Dispose(cx) }

// Root returns the root scope of the tree.
func (h *Host) Root() *ctx.Context { return h.root }

// Profile returns the profile the host was started with.
func (h *Host) Profile() *profiles.Profile { return h.profile }

// Logger returns the host's logger.
func (h *Host) Logger() *slog.Logger { return h.logger }

// Catalog returns the host's plugin catalog (not a copy: it must not be changed).
func (h *Host) Catalog() map[string]ctx.PluginDef { return h.catalog }

// Board returns the status board of the tree's MCP clients.
func (h *Host) Board() *StatusBoard { return h.board }

// Rows returns the rows mounted at start-up.
func (h *Host) Rows() []profiles.Row { return h.rows }

// Mount mounts the profile on the root: it refuses (Hosting) an endpoint file a running
// host publishes, subscribes the status board to every client's reports, serves the
// profile's clients' views (MethodClients), offers what the rows will answer of the
// servers' requests (offer), provides the MCP catalog cache and the servers'
// instructions for tool search, and mounts the enabled rows in order. It returns once they
// are mounted; they load on their own goroutines (Ready waits for them).
func (h *Host) Mount() error {
	h.began = time.Now()
	root, p := h.root, h.profile
	if h.opts.Hosting {
		if err := h.endpointsFree(p.Rows); err != nil {
			return err
		}
	}
	if _, err := mcpclient.StatusEvent.On(root, h.board.Report); err != nil {
		return err
	}
	if err := exposeClients(root, h.board); err != nil {
		return err
	}
	h.provideCatalog()
	if _, err := secrets.ScrubberKey.Provide(root, new(secrets.Scrubber)); err != nil {
		return err
	}
	if _, err := toolsearch.InstructionsKey.Provide(root, toolsearch.InstructionsFunc(mcpclient.InstructionsOf)); err != nil {
		return err
	}
	if _, err := agent.ProfileKey.Provide(root, p.Name); err != nil {
		return err
	}
	rows := h.mountedRows(p.Rows)
	h.rows = rows
	if err := h.offer(rows); err != nil {
		return err
	}
	return mountRows(root, h.catalog, rows, h.mounts)
}

// offer declares in the root, before any row mounts, what the profile's rows will answer
// of the MCP servers' requests: the page's forms and URLs when a console row mounts (a
// long-running host), and sampling when an agent row mounts whose sampling is not "deny"
// (its sessions answer their calls' requests). The clients declare it from their first
// connection, whichever row loads first; the responders and samplers are looked up when a
// request arrives (elicitation.Offer, sampling.Offer). What the invocation answers itself
// (its terminal, a gateway's sessions) it provides or offers in the root before Mount.
func (h *Host) offer(rows []profiles.Row) error {
	if h.opts.Hosting && UsesPlugin(rows, UseConsole) {
		if _, err := elicitation.Offer(h.root, "host", elicitation.ModeForm, elicitation.ModeURL); err != nil {
			return err
		}
	}
	if agentSamples(rows) {
		if _, err := sampling.Offer(h.root, "host"); err != nil {
			return err
		}
	}
	return nil
}

// agentSamples reports whether an enabled agent row (at any depth) answers sampling: its
// sampling is not "deny".
func agentSamples(rows []profiles.Row) bool {
	for _, r := range rows {
		if !r.Enabled {
			continue
		}
		if r.Use == UseAgent && r.Config["sampling"] != "deny" || agentSamples(r.Rows) {
			return true
		}
	}
	return false
}

// Ready waits, until cx is done, for the tree to settle: every plugin mounted so far has
// loaded or failed (an MCP client's activation includes its first connection and tool
// discovery); with an MCP server manager, also until it has read its settings and none of
// its servers is starting. Waiting that runs out is not an error: slow servers go on
// connecting in the background, and a warning is logged. Rows that failed to load are
// logged. It reports whether the tree settled.
func (h *Host) Ready(cx context.Context) bool {
	if err := waitReady(cx, h.root); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			h.logger.Warn("start-up is taking long; continuing with the plugins that are ready",
				"waited", time.Since(h.began).Round(time.Millisecond))
		}
		return false
	}
	for _, f := range h.mounts.failed() {
		h.logger.Warn("plugin failed to load", "row", f)
	}
	h.logger.Debug("profile mounted", "profile", h.profile.Name, "took", time.Since(h.began).Round(time.Millisecond))
	return true
}

// Failed returns "path: error" for every mounted row whose scope failed, in mount order.
func (h *Host) Failed() []string { return h.mounts.failed() }

// FailedUse returns the error of the first mounted row of the plugin called use whose scope
// failed, naming the row, or nil.
func (h *Host) FailedUse(use string) error { return h.mounts.failedUse(use) }

// Agents returns the live agent scopes' layered contexts by layer name (a row's ids joined
// with dots: "coder.review"), for the gateway's agent routes (gateway.Options.Agents).
func (h *Host) Agents() map[string]*ctx.Context { return h.mounts.agentContexts() }

// provideCatalog provides the MCP catalog cache in the root, in Options.CatalogDir, before
// the profile's rows mount. The profile's fleet key is the servers' default startup and
// idle timeout.
func (h *Host) provideCatalog() {
	if h.opts.CatalogDir == "" {
		return
	}
	p := h.profile
	store, err := catalog.Open(catalog.Options{Dir: h.opts.CatalogDir, Logger: h.logger, Startup: p.Fleet.Startup,
		IdleTimeout: time.Duration(p.Fleet.IdleTimeoutMs) * time.Millisecond})
	if err == nil {
		_, err = catalog.Key.Provide(h.root, store)
	}
	if err != nil {
		h.logger.Debug("no MCP catalog cache", "err", err)
	}
}

// mountedRows returns the rows of a profile as this host mounts them: adjusted
// (Options.AdjustRows), with the workspace where an agent runs (WithWorkspaceRow, rooted
// in the working directory, its catalog entry seeded), and without the remote API and the
// page's methods unless it hosts.
func (h *Host) mountedRows(rows []profiles.Row) []profiles.Row {
	if h.opts.AdjustRows != nil {
		rows = h.opts.AdjustRows(rows)
	}
	dir := workingDir()
	rows, added := WithWorkspaceRow(rows, h.opts.Self, dir, h.opts.SelfEnv)
	if added {
		h.seedWorkspace(rows[len(rows)-1], dir)
	}
	if !h.opts.Hosting {
		// The remote API and the page's methods are the host's: a one-shot use never
		// publishes an endpoint.
		rows = withoutUse(withoutUse(rows, UseRemote), UseConsole)
	}
	return rows
}

// endpointsFree refuses, before anything is mounted, a host whose remote rows would
// publish an endpoint file that belongs to a running host (naming it).
func (h *Host) endpointsFree(rows []profiles.Row) error {
	for _, r := range rows {
		if !r.Enabled {
			continue
		}
		if err := h.endpointsFree(r.Rows); err != nil {
			return err
		}
		if r.Use != UseRemote {
			continue
		}
		def, ok := h.catalog[UseRemote]
		if !ok {
			continue
		}
		if v, err := def.DecodeConfig(r.Config); err == nil {
			if cfg, ok := v.(remote.Config); ok {
				if err := remote.InUse(cfg); err != nil {
					return fmt.Errorf("%s: %w", r.Path, err)
				}
			}
		}
	}
	return nil
}

// UsesPlugin reports whether an enabled row of rows, at any depth, mounts the plugin
// called use.
func UsesPlugin(rows []profiles.Row, use string) bool {
	for _, r := range rows {
		if r.Enabled && (r.Use == use || UsesPlugin(r.Rows, use)) {
			return true
		}
	}
	return false
}

// withoutUse returns rows with every row (at any depth) that mounts use disabled.
func withoutUse(rows []profiles.Row, use string) []profiles.Row {
	out := make([]profiles.Row, len(rows))
	for i, r := range rows {
		if r.Use == use {
			if !r.AgentScope() {
				r.Enabled = false
			} else {
				r.Use = "" // an agent scope: its nested rows still mount
			}
		}
		r.Rows = withoutUse(r.Rows, use)
		out[i] = r
	}
	return out
}

// CountRows counts the enabled rows of rows, nested ones included, that mount a plugin.
func CountRows(rows []profiles.Row) int {
	n := 0
	for _, r := range rows {
		if !r.Enabled {
			continue
		}
		if r.Use != "" {
			n++
		}
		n += CountRows(r.Rows)
	}
	return n
}

// AddTokenFile gives every enabled remote row of rows (nested ones included) that names no
// token file remote.token in dir (none when dir is "").
func AddTokenFile(rows []profiles.Row, dir string) {
	for i := range rows {
		r := &rows[i]
		AddTokenFile(r.Rows, dir)
		if _, ok := r.Config["tokenFile"]; ok || dir == "" || r.Use != UseRemote || !r.Enabled {
			continue
		}
		cfg := maps.Clone(r.Config)
		if cfg == nil {
			cfg = map[string]any{}
		}
		cfg["tokenFile"] = filepath.Join(dir, "remote.token")
		r.Config = cfg
	}
}
