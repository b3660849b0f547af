package mcpclient

import (
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/userdirs"
)

// defaultMaxToolCallMs is the absolute cap of one tools/call or resources/read that keeps
// reporting progress: ten minutes, long enough for a build or an indexing run that says how
// far it got, short enough that a server reporting progress for ever cannot hold a turn.
const defaultMaxToolCallMs = 600_000

// logLevels are the values of [Config.LogLevel] (the MCP logging levels, RFC 5424 order).
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// defaultElicitationTimeoutMs is how long a server's question waits for an answer: ten
// minutes, as long as a call may run at all by default.
const defaultElicitationTimeoutMs = 600_000

// defaultProtocol fills the defaults of the protocol settings (maxToolCallMs,
// elicitationTimeoutMs).
func (c *Config) defaultProtocol() {
	c.MaxToolCallMs = defaultMaxToolCallMs
	c.ElicitationTimeoutMs = defaultElicitationTimeoutMs
}

// validateProtocol checks maxToolCallMs, elicitationTimeoutMs, logLevel and roots.
func (c Config) validateProtocol(v *validator) {
	v.millis("maxToolCallMs", c.MaxToolCallMs)
	v.millis("elicitationTimeoutMs", c.ElicitationTimeoutMs)
	for i, r := range c.Roots {
		if _, err := rootURI(r); err != nil {
			v.addf(fmt.Sprintf("roots[%d]", i), "%v", err)
		}
	}
	if c.LogLevel != "" && !slices.Contains(logLevels, c.LogLevel) {
		v.addf("logLevel", "expected one of %s, got %q", strings.Join(logLevels, ", "), c.LogLevel)
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
func slogLevel(l mcp.LoggingLevel) slog.Level { //nolint:staticcheck // SEP-2577: server logs stay for peers on protocol versions that have them (2025-11-25)
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

// ElicitationTimeout returns ElicitationTimeoutMs as a duration.
func (c Config) ElicitationTimeout() time.Duration { return millis(c.ElicitationTimeoutMs) }

// rootURI turns a configured root (an absolute directory, ~/dir, or a file:// URI) into its
// file:// URI.
func rootURI(root string) (string, error) {
	if strings.HasPrefix(root, "file://") {
		u, err := url.Parse(root)
		if err != nil || u.Host != "" && u.Host != "localhost" || !path.IsAbs(u.Path) {
			return "", fmt.Errorf("expected a file:// URI of an absolute directory, got %q", root)
		}
		return (&url.URL{Scheme: "file", Path: path.Clean(u.Path)}).String(), nil
	}
	dir := root
	if rest, ok := strings.CutPrefix(root, "~/"); ok || root == "~" {
		home, err := userdirs.Env{}.Home()
		if err != nil {
			return "", fmt.Errorf("%q: %w", root, err)
		}
		dir = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("expected an absolute directory or a file:// URI, got %q", root)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Clean(dir))}).String(), nil
}
