package mcpclient

import (
	"time"

	"github.com/cordisgo/harness/plugins/mcpclient/catalog"
)

// Values of [Config.Startup].
const (
	// StartupEager connects when the client mounts (the default).
	StartupEager = "eager"
	// StartupLazy registers the server's cached tools without starting it, and starts it
	// at the first call.
	StartupLazy = "lazy"
)

// defaultIdleTimeoutMs is how long a lazy server may go without a call before it is
// stopped: ten minutes, long enough that a conversation that uses a server keeps it, short
// enough that a fleet of rarely used servers does not keep fifty processes alive.
const defaultIdleTimeoutMs = 600_000

// validateStartup checks startup and idleTimeoutMs.
func (c Config) validateStartup(v *validator) {
	switch c.Startup {
	case "", StartupEager, StartupLazy:
	default:
		v.addf("startup", "expected %q or %q, got %q", StartupEager, StartupLazy, c.Startup)
	}
	if c.IdleTimeoutMs < 0 || c.IdleTimeoutMs > maxMillis {
		v.addf("idleTimeoutMs", "must be 0 (the fleet's setting) or a positive number of milliseconds no greater than %d, got %d", maxMillis, c.IdleTimeoutMs)
	}
}

// lazyPolicy is the startup a client follows: lazy or not, and its idle timeout, from the
// entry's own settings, else the fleet's (the catalog service's), else the defaults.
func (c Config) lazyPolicy(store *catalog.Store) (lazy bool, idle time.Duration) {
	startup := c.Startup
	if startup == "" && store != nil {
		startup = store.Startup()
	}
	idle = millis(c.IdleTimeoutMs)
	if idle == 0 && store != nil {
		idle = store.IdleTimeout()
	}
	if idle == 0 {
		idle = millis(defaultIdleTimeoutMs)
	}
	return startup == StartupLazy, idle
}
