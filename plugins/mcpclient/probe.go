package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/secrets"
)

// ProbeStage is how far a probe got. A failed probe names the stage that failed; a
// successful one is [ProbeOK]. (The manager resolves its entries' references before Probe
// is called; a configuration with unresolved references, such as a profile row, is resolved
// by Probe itself and fails at ProbeConnect when that fails.)
type ProbeStage string

// Probe stages, in order.
const (
	// ProbeConnect: starting the process, or reaching the HTTP endpoint.
	ProbeConnect ProbeStage = "connect"
	// ProbeAuthorize: the server wants an OAuth login, or obtaining or refreshing the token
	// failed (the stored credentials are used; a probe never opens a browser).
	ProbeAuthorize ProbeStage = "authorize"
	// ProbeInitialize: the MCP handshake.
	ProbeInitialize ProbeStage = "initialize"
	// ProbeListTools: tools/list.
	ProbeListTools ProbeStage = "list-tools"
	// ProbeOK: every stage succeeded.
	ProbeOK ProbeStage = "ok"
)

// Probe defaults, used when [ProbeOptions] leaves a field zero.
const (
	defaultProbeMaxTools            = 200
	defaultProbeMaxDescriptionBytes = 1024
)

// ProbeOptions bounds a probe. The zero value uses the defaults. It is a plain value.
type ProbeOptions struct {
	// MaxTools caps the tools listed (default 200); listing stops once it is reached.
	MaxTools int
	// MaxDescriptionBytes caps each tool description (default 1024), cut at a UTF-8
	// boundary with "…".
	MaxDescriptionBytes int
	// Logger receives the SDK's and the transport's diagnostics (nil: discarded).
	Logger *slog.Logger
	// Credentials is the store an OAuth server's token is read from (nil: CredentialsStore).
	Credentials mcpauth.Store
}

// ProbeTool is one tool a probe listed. It is a plain value.
type ProbeTool struct {
	// Name is the public name the tool would be registered under.
	Name string `json:"name"`
	// RawName is the server's name for it.
	RawName     string `json:"rawName"`
	Description string `json:"description,omitempty"`
	// Allowed reports whether the configuration's allowedTools admits it.
	Allowed bool `json:"allowed"`
}

// ProbeTimings are the durations of the stages a probe went through.
//
// ProbeTimings is a plain value.
type ProbeTimings struct {
	// Connect is the time to start the process or get the first HTTP response.
	Connect time.Duration `json:"connectNs,omitempty"`
	// Initialize is the MCP handshake after that.
	Initialize time.Duration `json:"initializeNs,omitempty"`
	// ListTools is the tools/list drain.
	ListTools time.Duration `json:"listToolsNs,omitempty"`
	// Close is the time to close the connection (and a stdio server's process group).
	Close time.Duration `json:"closeNs,omitempty"`
	// Total is the whole probe.
	Total time.Duration `json:"totalNs"`
}

// CleanupOutcome is how a probe's connection ended, independently of the probe's result.
type CleanupOutcome string

// Cleanup outcomes.
const (
	// CleanupClosed: the connection (and a stdio server's process group) is gone.
	CleanupClosed CleanupOutcome = "closed"
	// CleanupIncomplete: a stdio server's process group could not be confirmed gone
	// ([ErrCleanupIncomplete]); a manager should not start the server again until it is.
	CleanupIncomplete CleanupOutcome = "cleanup-incomplete"
	// CleanupError: closing failed otherwise.
	CleanupError CleanupOutcome = "error"
)

// ProbeCleanup is the independent result of closing a probe's connection. It is a plain
// value.
type ProbeCleanup struct {
	Outcome CleanupOutcome `json:"outcome"`
	Err     string         `json:"error,omitempty"`
}

// ProbeResult is the outcome of [Probe]. It never carries configured secrets: header values,
// secret-looking environment values and URL credentials are masked in every text. It is a
// plain value.
type ProbeResult struct {
	// Stage is [ProbeOK], or the stage that failed; Err describes the failure.
	Stage ProbeStage `json:"stage"`
	Err   string     `json:"error,omitempty"`
	// Transport is "stdio", "streamable-http" or "sse" once connected.
	Transport       string `json:"transport,omitempty"`
	ServerName      string `json:"serverName,omitempty"`
	ServerVersion   string `json:"serverVersion,omitempty"`
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// ServerDescription is the server's description of itself (serverInfo.description).
	ServerDescription string `json:"serverDescription,omitempty"`
	// Instructions reports whether the server sent instructions, and their size.
	InstructionBytes int `json:"instructionBytes,omitempty"`
	// Tools lists the tools, at most MaxTools of them; ToolsTruncated says there were more.
	Tools          []ProbeTool `json:"tools,omitempty"`
	ToolsTruncated bool        `json:"toolsTruncated,omitempty"`
	// StderrTail is the end of a stdio server's stderr.
	StderrTail string       `json:"stderrTail,omitempty"`
	Timings    ProbeTimings `json:"timings"`
	Cleanup    ProbeCleanup `json:"cleanup"`
}

// OK reports whether every stage succeeded.
func (r ProbeResult) OK() bool { return r.Stage == ProbeOK }

// Probe connects to the server described by cfg (validated first), lists its tools and
// closes the connection, without touching any live client: a management surface uses it to
// test an entry. pcx bounds the whole probe, and each of connect+initialize and list-tools
// is bounded by cfg's startupTimeoutMs. The connection is always closed; the cleanup result
// is reported independently of the probe's stage.
//
// Probe is safe for concurrent use; probes share nothing.
func Probe(pcx context.Context, cfg Config, opts ProbeOptions) ProbeResult {
	start := time.Now()
	scrub := secretScrubber(cfg)
	res := ProbeResult{Stage: ProbeConnect, Cleanup: ProbeCleanup{Outcome: CleanupClosed}}
	finish := func() ProbeResult {
		res.Err = scrub.Replace(res.Err)
		res.StderrTail = scrub.Replace(res.StderrTail)
		res.Cleanup.Err = scrub.Replace(res.Cleanup.Err)
		res.Timings.Total = time.Since(start)
		return res
	}
	if !cfg.Expanded && cfg.HasReferences() {
		// A profile row: resolve it as a mount would (environment, default credentials).
		x, err := cfg.Expand(&secrets.Resolver{Secrets: secrets.DefaultCredentials})
		if err != nil {
			res.Err = fmt.Sprintf("mcp server %q: %v", cfg.ServerName, err)
			return finish()
		}
		x.Expanded = true
		cfg, scrub = x, secretScrubber(x)
	}
	if err := cfg.Validate(); err != nil {
		res.Err = err.Error()
		return finish()
	}
	if opts.MaxTools <= 0 {
		opts.MaxTools = defaultProbeMaxTools
	}
	if opts.MaxDescriptionBytes <= 0 {
		opts.MaxDescriptionBytes = defaultProbeMaxDescriptionBytes
	}

	var (
		mu      sync.Mutex
		reached time.Time
	)
	dopts := dialOptions{logger: opts.Logger, onTransportReady: func() {
		mu.Lock()
		if reached.IsZero() {
			reached = time.Now()
		}
		mu.Unlock()
	}}
	if cfg.UsesOAuth() {
		dopts.authStore = opts.Credentials
		a, err := newAuthorizer(cfg, dopts)
		if err != nil {
			res.Stage, res.Err = ProbeAuthorize, err.Error()
			return finish()
		}
		dopts.auth = a
	}
	cx, cancel := context.WithTimeout(pcx, cfg.StartupTimeout())
	conn, err := dial(cx, cfg, dopts)
	cancel()
	dialed := time.Now()
	mu.Lock()
	r := reached
	mu.Unlock()
	if r.IsZero() {
		res.Timings.Connect = dialed.Sub(start)
	} else {
		res.Timings.Connect = r.Sub(start)
		res.Timings.Initialize = dialed.Sub(r)
	}
	if err != nil {
		switch {
		case errors.Is(err, mcpauth.ErrNeedsAuth) || errors.Is(err, mcpauth.ErrAuthorization):
			res.Stage = ProbeAuthorize
		case !r.IsZero():
			res.Stage = ProbeInitialize
		}
		res.Err = err.Error()
		res.StderrTail = stderrOf(err)
		if errors.Is(err, ErrCleanupIncomplete) {
			res.Cleanup = ProbeCleanup{Outcome: CleanupIncomplete, Err: err.Error()}
		}
		return finish()
	}

	info := conn.Info()
	res.Stage = ProbeListTools
	res.Transport = conn.Transport()
	res.ServerName, res.ServerVersion, res.ProtocolVersion = info.ServerName, info.ServerVersion, info.ProtocolVersion
	res.ServerDescription = info.ServerDescription
	res.InstructionBytes = len(info.Instructions)
	listStart := time.Now()
	if info.Capabilities.Tools != nil {
		cx, cancel := context.WithTimeout(pcx, cfg.StartupTimeout())
		tools, more, err := listTools(cx, conn.Session(), opts.MaxTools)
		cancel()
		if err != nil {
			res.Err = err.Error()
		}
		res.ToolsTruncated = more
		for _, t := range tools {
			res.Tools = append(res.Tools, ProbeTool{
				Name:        PublicToolName(cfg.ServerName, t.Name),
				RawName:     t.Name,
				Description: capText(t.Description, opts.MaxDescriptionBytes),
				Allowed:     cfg.Allows(t.Name),
			})
		}
	}
	res.Timings.ListTools = time.Since(listStart)
	if res.Err == "" {
		res.Stage = ProbeOK
	}

	closeStart := time.Now()
	cx, cancel = context.WithTimeout(context.WithoutCancel(pcx), closeTimeout)
	cerr := conn.Close(cx)
	cancel()
	res.Timings.Close = time.Since(closeStart)
	res.StderrTail = conn.StderrTail()
	switch {
	case cerr == nil:
	case errors.Is(cerr, ErrCleanupIncomplete):
		res.Cleanup = ProbeCleanup{Outcome: CleanupIncomplete, Err: cerr.Error()}
	default:
		res.Cleanup = ProbeCleanup{Outcome: CleanupError, Err: cerr.Error()}
	}
	return finish()
}

// capText cuts s to at most max bytes at a UTF-8 boundary, ending with "…" when cut.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ellipsis = "…"
	keep := max - len(ellipsis)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + ellipsis
}
