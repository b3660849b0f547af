package mcpclient

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/redact"
	"github.com/cordisgo/harness/plugins/mcpclient/transport"
	"github.com/cordisgo/harness/secrets"
)

// Interface guards: the configuration has defaults and validates itself.
var (
	_ ctx.Defaulter = (*Config)(nil)
	_ ctx.Validator = Config{}
)

// Validate checks c after defaults and decoding. It returns nil, one
// [*ctx.ConfigError], or several joined with errors.Join, ordered by key path;
// every problem names its key.
//
// Unless [Config.Expanded] is set, the template-capable fields may hold ${…} references
// (see [secrets.Resolver]): their syntax is checked here, and checks of what they stand for (a
// URL's scheme, say) run again on the resolved configuration when the client mounts.
func (c Config) Validate() error {
	v := validator{}
	if !c.Expanded {
		c.checkReferences(&v.p)
	}
	if !ValidServerName(c.ServerName) {
		v.addf("serverName", "must match ^[A-Za-z0-9_-]{1,32}$, got %q", c.ServerName)
	}
	switch c.Transport {
	case TransportStdio:
		c.validateStdio(&v)
	case TransportStreamableHTTP:
		c.validateHTTP(&v)
	case "":
		v.addf("transport", "required: %q or %q", TransportStdio, TransportStreamableHTTP)
	default:
		v.addf("transport", "expected %q or %q, got %q", TransportStdio, TransportStreamableHTTP, c.Transport)
	}
	v.millis("toolCallTimeoutMs", c.ToolCallTimeoutMs)
	v.millis("startupTimeoutMs", c.StartupTimeoutMs)
	c.Reconnect.validate(&v)
	if c.MaxInstructionBytes < 1 {
		v.addf("maxInstructionBytes", "must be a positive number of bytes, got %d", c.MaxInstructionBytes)
	}
	if c.MaxOutputBytes < 1 {
		v.addf("maxOutputBytes", "must be a positive number of bytes, got %d", c.MaxOutputBytes)
	}
	c.validateToolLists(&v)
	c.validateProtocol(&v)
	c.validateStartup(&v)
	c.validateOAuth(&v)
	if p := c.ProtocolVersion; p != "" && p != ProtocolAuto && !slices.Contains(mcp.SupportedProtocolVersions(), p) {
		v.addf("protocolVersion", "expected %q or one of %s, got %q",
			ProtocolAuto, strings.Join(mcp.SupportedProtocolVersions(), ", "), p)
	}
	return v.err()
}

func (c Config) validateStdio(v *validator) {
	if strings.TrimSpace(c.Command) == "" {
		v.addf("command", "required for transport %q", TransportStdio)
	} else if strings.ContainsRune(c.Command, 0) {
		v.addf("command", "must not contain NUL")
	}
	for i, a := range c.Args {
		if strings.ContainsRune(a, 0) {
			v.addf(fmt.Sprintf("args[%d]", i), "must not contain NUL")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		if !validEnvName(k) {
			v.addf("env."+k, "not a valid environment variable name")
		} else if strings.ContainsRune(c.Env[k], 0) {
			v.addf("env."+k, "value must not contain NUL")
		}
	}
	if strings.ContainsRune(c.Cwd, 0) {
		v.addf("cwd", "must not contain NUL")
	}
	switch c.InheritEnv.Mode {
	case transport.InheritScrubbed, transport.InheritMinimal, transport.InheritAll, transport.InheritNone:
	default:
		v.addf("inheritEnv.mode", "expected %q, %q, %q or %q, got %q", transport.InheritScrubbed, transport.InheritMinimal, transport.InheritAll, transport.InheritNone, c.InheritEnv.Mode)
	}
	for i, name := range c.InheritEnv.Extra {
		if !validEnvName(name) {
			v.addf(fmt.Sprintf("inheritEnv.extra[%d]", i), "not a valid environment variable name: %q", name)
		}
	}
	if c.URL != "" {
		v.addf("url", "not allowed for transport %q", TransportStdio)
	}
	if len(c.Headers) > 0 {
		v.addf("headers", "not allowed for transport %q", TransportStdio)
	}
}

func (c Config) validateHTTP(v *validator) {
	if c.URL == "" {
		v.addf("url", "required for transport %q", TransportStreamableHTTP)
	} else if c.Expanded || !secrets.HasReferences(c.URL) { // a URL with references is checked once resolved
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// Quote the redacted form: a URL may carry credentials.
			v.addf("url", "expected an http or https URL, got %q", redact.URL(c.URL))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
		if !validHeaderName(k) {
			v.addf("headers."+k, "not a valid HTTP header name")
		} else if strings.ContainsAny(c.Headers[k], "\r\n\x00") {
			v.addf("headers."+k, "value must not contain CR, LF or NUL")
		}
	}
	for key, set := range map[string]bool{
		"command": c.Command != "",
		"args":    len(c.Args) > 0,
		"cwd":     c.Cwd != "",
		"env":     len(c.Env) > 0,
	} {
		if set {
			v.addf(key, "not allowed for transport %q", TransportStreamableHTTP)
		}
	}
}

func (r ReconnectConfig) validate(v *validator) {
	v.millis("reconnect.initialDelayMs", r.InitialDelayMs)
	v.millis("reconnect.maxDelayMs", r.MaxDelayMs)
	if r.InitialDelayMs > r.MaxDelayMs {
		v.addf("reconnect.initialDelayMs", "must be less than or equal to reconnect.maxDelayMs (%d), got %d", r.MaxDelayMs, r.InitialDelayMs)
	}
	if r.MaxAttempts < 1 {
		v.addf("reconnect.maxAttempts", "must be a positive integer, got %d", r.MaxAttempts)
	}
}

func (c Config) validateToolLists(v *validator) {
	if c.AllowedTools != nil && len(*c.AllowedTools) == 0 {
		v.addf("allowedTools", "is empty: omit it to admit every tool the server lists, or name at least one tool")
	} else if c.AllowedTools != nil {
		v.toolNames("allowedTools", *c.AllowedTools)
	}
	v.toolNames("deniedTools", c.DeniedTools)
}

// toolNames checks a list of raw tool names: non-empty, each once.
func (v *validator) toolNames(key string, tools []string) {
	seen := make(map[string]bool, len(tools))
	for i, name := range tools {
		k := fmt.Sprintf("%s[%d]", key, i)
		switch {
		case strings.TrimSpace(name) == "":
			v.addf(k, "must be a non-empty tool name")
		case seen[name]:
			v.addf(k, "lists %q more than once", name)
		}
		seen[name] = true
	}
}

// validator collects problems in the order they are found.
type validator struct {
	p ctx.Problems
}

func (v *validator) addf(key, format string, args ...any) { v.p.Add(key, format, args...) }

func (v *validator) millis(key string, ms int) {
	if ms < 1 || ms > maxMillis {
		v.addf(key, "must be a positive number of milliseconds no greater than %d, got %d", maxMillis, ms)
	}
}

func (v *validator) err() error {
	// Map iteration in validateHTTP is unordered; sort for stable output.
	v.p.SortByKey()
	return v.p.Err()
}

// errUnsupportedTransport is dial's error for a configuration that skipped Validate.
func errUnsupportedTransport(cfg Config) error {
	return fmt.Errorf("mcp server %q: %w", cfg.ServerName,
		&ctx.ConfigError{Key: "transport", Msg: fmt.Sprintf("unsupported transport %q", cfg.Transport)})
}

// validEnvName accepts portable variable names: non-empty, no '=', no NUL.
func validEnvName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "=\x00")
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		isAlnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !isAlnum && !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}
