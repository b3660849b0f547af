package mcpclient

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/cordisgo/harness/internal/redact"
	"github.com/cordisgo/harness/plugins/mcpclient/transport"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Transport names accepted in [Config.Transport].
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
)

// Protocol version settings for [Config.ProtocolVersion].
const (
	// ProtocolAuto lets the SDK negotiate (it offers its newest version and
	// falls back to the legacy initialize handshake).
	ProtocolAuto = "auto"
	// DefaultStdioProtocolVersion is pinned for stdio servers because some
	// legacy servers exit when their first message is not `initialize`
	// (go-sdk issue #1177), which makes the SDK's discovery probe fatal.
	DefaultStdioProtocolVersion = "2025-11-25"
)

// Defaults applied by [Config.Default]. Each one is justified where it is
// declared so the configuration catalogue can quote it.
const (
	// defaultToolCallTimeoutMs bounds one tools/call. A minute matches the
	// reference harness and the MCP TypeScript SDK's request timeout: long
	// enough for builds and searches, short enough that a wedged server
	// does not stall a turn indefinitely.
	defaultToolCallTimeoutMs = 60_000
	// defaultStartupTimeoutMs bounds connect plus first discovery. A cold
	// `npx -y` has to download and install the package before the server
	// can answer initialize; 30 s (the common peer default) is not always
	// enough on a slow network, 60 s is.
	defaultStartupTimeoutMs = 60_000
	// defaultMaxInstructionBytes caps the attributed server instructions
	// (UTF-8 bytes): generous for real servers, small enough that one
	// server cannot flood the system prompt.
	defaultMaxInstructionBytes = 32_768
	// defaultMaxOutputBytes caps the model-facing projection of one tool
	// result: about 25k tokens, the order of magnitude peers settle on
	// (Claude Code warns at 10k tokens and caps at 25k).
	defaultMaxOutputBytes = 100_000
	// defaultReconnectInitialDelayMs is the first backoff step: short
	// enough that a crashed-and-restarted server is back almost at once,
	// long enough not to spin on a server that dies during startup.
	defaultReconnectInitialDelayMs = 500
	// defaultReconnectMaxDelayMs caps exponential backoff at 30 s, the
	// usual ceiling for interactive tools (the SDK's own SSE reconnect uses
	// the same cap).
	defaultReconnectMaxDelayMs = 30_000
	// defaultReconnectMaxAttempts: with doubling from 500 ms capped at 30 s,
	// 10 attempts span about two and a half minutes — enough to ride out a
	// server redeploy or a short network outage, short enough that a dead
	// server is reported failed while the user still cares. It matches the
	// reference harness (dsh-mcp-spec §3.2).
	defaultReconnectMaxAttempts = 10

	// maxMillis is the largest accepted millisecond value (2^31-1, the
	// reference harness's bound); it also keeps durations far from overflow.
	maxMillis = 2_147_483_647
)

// maxServerNameLen is the longest [Config.ServerName] accepted.
const maxServerNameLen = 32

// ValidServerName reports whether name is a valid [Config.ServerName]: it matches
// ^[A-Za-z0-9_-]{1,32}$. (A hand-written check: compiling that regular expression, with
// its counted repetition, cost every process that links this package about half a
// millisecond at start.)
func ValidServerName(name string) bool {
	return len(name) <= maxServerNameLen && toolregistry.ValidName(name)
}

// Config is the configuration of one MCP server connection, with camelCase keys. Decode it
// with ctx.Decode (defaults, strict decoding, then [Config.Validate]), the decoder profiles
// and the MCP manager's settings file use. Its command, args, env, cwd, url and headers may
// hold ${…} references ([secrets.Resolver]), resolved when the client mounts.
//
// Config is a plain value; it is safe for concurrent reads. Its maps and
// slices are shared by copies, so treat a validated Config as immutable.
type Config struct {
	// ServerName names the server locally (tool names mcp__<serverName>__<tool>, the prompt section, status), unique in its registration scope; required, ^[A-Za-z0-9_-]{1,32}$.
	ServerName string `json:"serverName"`
	// Transport is "stdio" or "streamable-http"; required.
	Transport string `json:"transport"`

	// Command is the stdio server's executable, looked up in PATH when it has no path separator; required for stdio.
	Command string `json:"command,omitempty"`
	// Args are the stdio server's arguments, passed verbatim (no shell); default none.
	Args []string `json:"args,omitempty"`
	// Env sets variables in the stdio server's environment, always winning over inherited ones (so a token can be passed explicitly); default none.
	Env map[string]string `json:"env,omitempty"`
	// Cwd is the stdio server's working directory; default empty, the harness's own.
	Cwd string `json:"cwd,omitempty"`
	// InheritEnv selects which of the harness's variables a stdio server inherits before env applies; default mode "scrubbed".
	InheritEnv InheritEnv `json:"inheritEnv"`

	// URL is the Streamable HTTP endpoint (http or https), with a legacy HTTP+SSE fallback on the same URL; required for streamable-http.
	URL string `json:"url,omitempty"`
	// Headers are sent on every HTTP request (POST, GET stream, DELETE), for example Authorization; default none.
	Headers map[string]string `json:"headers,omitempty"`
	// OAuth configures authorization for servers that answer 401 with an OAuth challenge; the defaults log in with a browser and dynamic registration (docs/authorization.md).
	OAuth OAuthConfig `json:"oauth"`

	// ToolCallTimeoutMs is how long a tools/call or resources/read may go without progress (each notifications/progress restarts it) and bounds other resource requests; the server is sent notifications/cancelled when it expires (default 60000).
	ToolCallTimeoutMs int `json:"toolCallTimeoutMs"`
	// MaxToolCallMs caps a tools/call or resources/read however much progress the server reports; the effective cap is never below toolCallTimeoutMs (default 600000, 10 min).
	MaxToolCallMs int `json:"maxToolCallMs"`
	// LogLevel is sent as logging/setLevel after connecting, to a server that offers logging: debug, info, notice, warning, error, critical, alert or emergency; default "", the server's own level.
	LogLevel string `json:"logLevel,omitempty"`
	// ElicitationTimeoutMs is how long a server's question (elicitation/create) waits for an answer before it is reported to the server as cancelled; meanwhile the call that asked does not time out for lack of progress (default 600000, 10 min).
	ElicitationTimeoutMs int `json:"elicitationTimeoutMs"`
	// Roots are the directories offered to the server as its roots (roots/list), absolute paths or file:// URIs; default none, and the roots capability is not advertised (servers that replace their allowed directories with the client's roots see no change).
	Roots []string `json:"roots,omitempty"`
	// StartupTimeoutMs bounds each connection attempt: connect plus tool discovery (default 60000, enough for a cold npx).
	StartupTimeoutMs int `json:"startupTimeoutMs"`
	// FailOnStartupError fails the plugin's activation when the first attempt fails, instead of retrying in the background (default false).
	FailOnStartupError bool `json:"failOnStartupError"`
	// Startup is when the server starts: "eager" connects when the client mounts, "lazy" registers the tools of the server's catalog cache without starting it and starts it at the first call (a lazy server without a cache starts once to fill it); default "", the fleet's setting (the profile's fleet.startup), else eager.
	Startup string `json:"startup,omitempty"`
	// IdleTimeoutMs is how long a lazy server may go without a call before it is stopped (its tools stay; the next call starts it again); default 0, the fleet's setting, else 600000 (10 min).
	IdleTimeoutMs int `json:"idleTimeoutMs,omitempty"`
	// Reconnect is the reconnection policy: exponential backoff, each delay spread randomly between 80 % and 120 % (never above maxDelayMs) so that servers lost together do not reconnect in the same instant, with a budget that resets after a connection stayed up for maxDelayMs.
	Reconnect ReconnectConfig `json:"reconnect"`
	// MaxInstructionBytes caps the attributed server instructions in the system prompt, cut with a marker (default 32768).
	MaxInstructionBytes int `json:"maxInstructionBytes"`
	// AllowedTools lists the raw tool names registered; default omitted, every tool (an empty list is an error).
	AllowedTools *[]string `json:"allowedTools,omitempty"`
	// DeniedTools lists raw tool names never registered, even when allowedTools names them (deny wins); default none.
	DeniedTools []string `json:"deniedTools,omitempty"`
	// ProtocolVersion is the MCP version offered: default "" ("2025-11-25" for stdio, negotiated for HTTP), "auto" to negotiate, or a supported version.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// MaxOutputBytes caps the model-facing text of one tool result, cut with a marker (default 100000).
	MaxOutputBytes int `json:"maxOutputBytes"`
	// Secrets are further values to mask in logs, status and probe results, beyond the ones
	// recognised automatically (header values, secret-looking env values, URL credentials).
	// Not configurable from a profile: the MCP manager sets it to the values its templates
	// resolved.
	Secrets []string `json:"-"`
	// Expanded says that the ${…} references of the template-capable fields were resolved
	// already (by the MCP manager), so the values are taken literally: the client neither
	// checks nor expands references again. Not configurable from a profile.
	Expanded bool `json:"-"`
}

// ReconnectConfig is the supervisor's reconnection policy: exponential
// backoff from InitialDelayMs, doubling up to MaxDelayMs, giving up after
// MaxAttempts consecutive failures. It is a plain value.
type ReconnectConfig struct {
	// Enabled turns reconnection on (default true).
	Enabled bool `json:"enabled"`
	// InitialDelayMs is the delay before the first retry, doubling for each further one (default 500).
	InitialDelayMs int `json:"initialDelayMs"`
	// MaxDelayMs caps the delay, and is the uptime after which the budget resets (default 30000).
	MaxDelayMs int `json:"maxDelayMs"`
	// MaxAttempts is the budget of consecutive retries before giving up and unregistering the tools (default 10).
	MaxAttempts int `json:"maxAttempts"`
}

// InheritEnv decides which variables of the harness's own environment a
// stdio child inherits before [Config.Env] is applied on top:
//
//	inheritEnv: {mode: minimal, extra: [HTTPS_PROXY, NODE_OPTIONS]}
//
// Mode is one of the modes of [transport.Inherit]: "scrubbed" (the default: everything but
// the names [transport.Scrubbed] reports), "minimal" ([transport.MinimalEnvNames] only),
// "all" (everything, including secrets) or "none" (nothing). Extra names further variables
// to pass through in any mode when they are set in the harness's environment (a
// credential-shaped name included).
// It is a plain value.
type InheritEnv struct {
	// Mode is "scrubbed" (everything except names containing KEY, PASSWORD, SECRET or TOKEN in any case, and HARNESS_*), "minimal" (PATH, HOME, locale and the like), "all" (everything, secrets included) or "none" (default "scrubbed").
	Mode string `json:"mode"`
	// Extra names further variables passed through in any mode when set in the harness's environment; default none.
	Extra []string `json:"extra,omitempty"`
}

// Default fills c with the defaults. Call it on a zero value before
// decoding so decoded fields override the defaults (nested objects such
// as reconnect merge key by key).
func (c *Config) Default() {
	c.ToolCallTimeoutMs = defaultToolCallTimeoutMs
	c.StartupTimeoutMs = defaultStartupTimeoutMs
	c.FailOnStartupError = false
	c.Reconnect = ReconnectConfig{
		Enabled:        true,
		InitialDelayMs: defaultReconnectInitialDelayMs,
		MaxDelayMs:     defaultReconnectMaxDelayMs,
		MaxAttempts:    defaultReconnectMaxAttempts,
	}
	c.MaxInstructionBytes = defaultMaxInstructionBytes
	c.MaxOutputBytes = defaultMaxOutputBytes
	c.InheritEnv = InheritEnv{Mode: transport.InheritScrubbed}
	c.defaultProtocol()
}

// ToolCallTimeout returns ToolCallTimeoutMs as a duration.
func (c Config) ToolCallTimeout() time.Duration { return millis(c.ToolCallTimeoutMs) }

// StartupTimeout returns StartupTimeoutMs as a duration.
func (c Config) StartupTimeout() time.Duration { return millis(c.StartupTimeoutMs) }

// InitialDelay returns InitialDelayMs as a duration.
func (r ReconnectConfig) InitialDelay() time.Duration { return millis(r.InitialDelayMs) }

// MaxDelay returns MaxDelayMs as a duration.
func (r ReconnectConfig) MaxDelay() time.Duration { return millis(r.MaxDelayMs) }

// EffectiveProtocolVersion returns the version to request from the SDK:
// "" means "let the SDK negotiate".
func (c Config) EffectiveProtocolVersion() string {
	switch c.ProtocolVersion {
	case ProtocolAuto:
		return ""
	case "":
		if c.Transport == TransportStdio {
			return DefaultStdioProtocolVersion
		}
		return ""
	default:
		return c.ProtocolVersion
	}
}

// Allows reports whether the raw tool name passes AllowedTools and DeniedTools: it is
// allowed (AllowedTools omitted or naming it) and not denied. Deny wins.
func (c Config) Allows(rawTool string) bool {
	if slices.Contains(c.DeniedTools, rawTool) {
		return false
	}
	return c.AllowedTools == nil || slices.Contains(*c.AllowedTools, rawTool)
}

func millis(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }

// redactedValue replaces secret values: the module's one marker.
const redactedValue = redact.Marker

// Redacted returns a deep copy of c that is safe to log or show in
// status. Redaction hides values, not references: env and header values
// are replaced by "[redacted]" unless they are ${…} references
// ("${secret:gh}", "Bearer ${GITHUB_TOKEN}" are shown as written), and the
// URL's password and secret-looking query values are masked (a URL
// without credentials is shown as written).
func (c Config) Redacted() Config {
	r := c
	r.Args = slices.Clone(c.Args)
	r.Env = redactMap(c.Env)
	r.Headers = redactMap(c.Headers)
	r.URL = redact.URL(c.URL)
	r.OAuth = c.OAuth.redacted()
	r.InheritEnv.Extra = slices.Clone(c.InheritEnv.Extra)
	if c.AllowedTools != nil {
		tools := slices.Clone(*c.AllowedTools)
		r.AllowedTools = &tools
	}
	r.DeniedTools = slices.Clone(c.DeniedTools)
	return r
}

// LogValue makes slog print the redacted form, so logging a Config can
// never leak a secret.
func (c Config) LogValue() slog.Value {
	r := c.Redacted()
	attrs := []slog.Attr{
		slog.String("server", r.ServerName),
		slog.String("transport", r.Transport),
	}
	if r.Command != "" {
		attrs = append(attrs, slog.String("command", r.Command), slog.Any("args", r.Args))
	}
	if r.Cwd != "" {
		attrs = append(attrs, slog.String("cwd", r.Cwd))
	}
	if len(r.Env) > 0 {
		attrs = append(attrs, slog.Any("env", r.Env))
	}
	if r.URL != "" {
		attrs = append(attrs, slog.String("url", r.URL))
	}
	if len(r.Headers) > 0 {
		attrs = append(attrs, slog.Any("headers", r.Headers))
	}
	return slog.GroupValue(attrs...)
}

// String returns the redacted configuration as compact JSON, so %v and
// %s never print a secret either.
func (c Config) String() string {
	b, err := json.Marshal(c.Redacted())
	if err != nil {
		return fmt.Sprintf("mcp server %q (unprintable config: %v)", c.ServerName, err)
	}
	return string(b)
}

func redactMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = redact.Value(v)
	}
	return out
}
