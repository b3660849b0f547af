package mcpclient

import (
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxToolCallMs is the absolute cap of one tools/call or resources/read that keeps
// reporting progress: ten minutes, long enough for a build or an indexing run that says how
// far it got, short enough that a server reporting progress for ever cannot hold a turn.
const DefaultMaxToolCallMs = 600_000

// LogLevels are the values of [Config.LogLevel] (the MCP logging levels, RFC 5424 order).
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// defaultProtocol fills the defaults of the protocol settings (maxToolCallMs).
func (c *Config) defaultProtocol() {
	c.MaxToolCallMs = DefaultMaxToolCallMs
}

// validateProtocol checks maxToolCallMs and logLevel.
func (c Config) validateProtocol(v *validator) {
	v.millis("maxToolCallMs", c.MaxToolCallMs)
	if c.LogLevel != "" && !slices.Contains(LogLevels, c.LogLevel) {
		v.addf("logLevel", "expected one of %s, got %q", strings.Join(LogLevels, ", "), c.LogLevel)
	}
}

// MaxToolCall returns the absolute cap of one tools/call or resources/read: MaxToolCallMs,
// but never less than the idle timeout (ToolCallTimeoutMs), so that raising the idle
// timeout alone never makes a silent call end earlier than it says.
func (c Config) MaxToolCall() time.Duration {
	return max(millis(c.MaxToolCallMs), c.ToolCallTimeout())
}

// slogLevel maps an MCP logging level to a slog level: debug to Debug; info and notice to
// Info; warning to Warn; error, critical, alert and emergency to Error. An unknown level is
// Info.
func slogLevel(l mcp.LoggingLevel) slog.Level {
	switch l {
	case "debug":
		return slog.LevelDebug
	case "warning":
		return slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		return slog.LevelError
	}
	return slog.LevelInfo
}
