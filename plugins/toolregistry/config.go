package toolregistry

import (
	"time"

	"github.com/cordisgo/harness/ctx"
)

// Interface guards: the plugin's configuration has defaults and validates itself.
var (
	_ ctx.Defaulter = (*Config)(nil)
	_ ctx.Validator = Config{}
)

// Config configures the registry (keys in camelCase). The zero value is not valid; the
// plugin starts from [Config.Default].
//
// Config is a plain value.
type Config struct {
	// HistorySize is how many execution records are kept, newest first out (default 100;
	// 0 keeps none): a window of recent calls for inspection; listen to the tools/executed
	// event for a complete log. The history also keeps at most 32 MiB of arguments and
	// results, dropping the oldest records first. Every record retains its result, and the
	// garbage collector marks the history on every cycle: a window of thousands costs
	// measurable CPU per call in a host whose heap is otherwise small.
	HistorySize int `json:"historySize"`
	// MaxOutputBytes caps the model-facing text of one result (text and JSON blocks);
	// longer output is cut with a marker saying how much was dropped (default 100000).
	MaxOutputBytes int `json:"maxOutputBytes"`
	// AttachmentMaxBytes bounds the attachment store; the oldest attachments are evicted to
	// make room (default 20 MiB; 0 refuses attachments).
	AttachmentMaxBytes int64 `json:"attachmentMaxBytes"`
	// DefaultTimeoutMs bounds executions of tools that declare no timeout (default 120000).
	DefaultTimeoutMs int `json:"defaultTimeoutMs"`
}

// Default sets the defaults.
func (o *Config) Default() {
	*o = Config{HistorySize: 100, MaxOutputBytes: 100_000, AttachmentMaxBytes: 20 << 20, DefaultTimeoutMs: 120_000}
}

// Validate checks the ranges; each problem is a [*ctx.ConfigError] naming its key.
func (o Config) Validate() error {
	var p ctx.Problems
	if o.HistorySize < 0 {
		p.Add("historySize", "must not be negative, got %d", o.HistorySize)
	}
	if o.MaxOutputBytes <= 0 {
		p.Add("maxOutputBytes", "must be a positive number of bytes, got %d", o.MaxOutputBytes)
	}
	if o.AttachmentMaxBytes < 0 {
		p.Add("attachmentMaxBytes", "must not be negative, got %d", o.AttachmentMaxBytes)
	}
	if o.DefaultTimeoutMs <= 0 {
		p.Add("defaultTimeoutMs", "must be a positive number of milliseconds, got %d", o.DefaultTimeoutMs)
	}
	return p.Err()
}

func (o *Config) defaultTimeout() time.Duration {
	return time.Duration(o.DefaultTimeoutMs) * time.Millisecond
}
