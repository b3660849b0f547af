package ptc

import (
	"time"

	"github.com/cordisgo/harness/ctx"
)

// Interface guards: the limits and the configuration have defaults and validate
// themselves.
var (
	_ ctx.Defaulter = (*Limits)(nil)
	_ ctx.Validator = Limits{}
	_ ctx.Defaulter = (*Config)(nil)
	_ ctx.Validator = Config{}
)

// Config is the ptc plugin's configuration: the limits of every run and the budget of the
// tools' catalog in the system prompt. A plain value; start from [Config.Default].
type Config struct {
	Limits
	// CatalogBytes bounds the tools' catalog, which every request of a PTC session carries
	// (default 6000): one line a tool while they fit, else the tools' names by server, else
	// the servers; programs get the rest with describe(...names). See [Catalog].
	CatalogBytes int `json:"catalogBytes"`
}

// Default sets the defaults.
func (c *Config) Default() {
	c.Limits.Default()
	c.CatalogBytes = DefaultCatalogBytes
}

// Validate checks the limits and that the budget is positive; each problem is a
// [*ctx.ConfigError] naming its key.
func (c Config) Validate() error {
	var p ctx.Problems
	p.AddError("", c.Limits.Validate())
	if c.CatalogBytes <= 0 {
		p.Add("catalogBytes", "must be positive, got %d", c.CatalogBytes)
	}
	return p.Err()
}

// Limits bound one program run. Each is enforced on its own, and a run that reaches one ends
// with an [*Error] whose [Kind] names it. The zero value is not valid; start from
// [Limits.Default] (the plugin does).
//
// Limits is a plain value.
type Limits struct {
	// WallTimeMs bounds the whole run, tool calls and sleeps included (default 600000,
	// ten minutes).
	WallTimeMs int `json:"wallTimeMs"`
	// CPUTimeMs bounds the time the interpreter spends running the program's own code,
	// summed over the run; time spent waiting for tools or sleeping does not count
	// (default 60000).
	CPUTimeMs int `json:"cpuTimeMs"`
	// MaxOutputBytes bounds what the run returns to the model: the console output plus the
	// JSON of the return value (default 1 MiB).
	MaxOutputBytes int `json:"maxOutputBytes"`
	// MaxToolCalls bounds the tool calls one run may make (default 1000).
	MaxToolCalls int `json:"maxToolCalls"`
	// MaxMemoryBytes bounds the heap the run may add to the process (default 256 MiB); see
	// the package documentation for how it is measured and what overshoot to expect.
	MaxMemoryBytes int64 `json:"maxMemoryBytes"`
	// MaxConcurrentCalls bounds the tool calls that overlap (default 10).
	MaxConcurrentCalls int `json:"maxConcurrentCalls"`
	// MaxSleepMs bounds one sleep(ms) (default 30000).
	MaxSleepMs int `json:"maxSleepMs"`
}

// Default sets the defaults.
func (l *Limits) Default() {
	*l = Limits{
		WallTimeMs:         600_000,
		CPUTimeMs:          60_000,
		MaxOutputBytes:     1 << 20,
		MaxToolCalls:       1000,
		MaxMemoryBytes:     256 << 20,
		MaxConcurrentCalls: 10,
		MaxSleepMs:         30_000,
	}
}

// Validate checks that every limit is positive; each problem is a [*ctx.ConfigError]
// naming its key.
func (l Limits) Validate() error {
	var p ctx.Problems
	positive := func(key string, v int64) {
		if v <= 0 {
			p.Add(key, "must be positive, got %d", v)
		}
	}
	positive("wallTimeMs", int64(l.WallTimeMs))
	positive("cpuTimeMs", int64(l.CPUTimeMs))
	positive("maxOutputBytes", int64(l.MaxOutputBytes))
	positive("maxToolCalls", int64(l.MaxToolCalls))
	positive("maxMemoryBytes", l.MaxMemoryBytes)
	positive("maxConcurrentCalls", int64(l.MaxConcurrentCalls))
	positive("maxSleepMs", int64(l.MaxSleepMs))
	return p.Err()
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
