package profiles

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/cordisgo/harness/internal/yamlnode"
)

// FleetStartups are the values of a profile's fleet.startup: eager (servers connect when
// they mount) or lazy (servers with a catalog cache start at their first call).
var FleetStartups = []string{"eager", "lazy"}

// Fleet is a profile's fleet key: the defaults of the MCP servers that set none of their
// own (mcpclient's startup and idleTimeoutMs):
//
//	fleet:
//	  startup: lazy          # eager (default) or lazy
//	  idleTimeoutMs: 300000  # a lazy server's idle time before it is stopped
//
// It is a plain value.
type Fleet struct {
	// Startup is "", "eager" or "lazy".
	Startup string
	// IdleTimeoutMs is 0 (the client's default) or a positive number of milliseconds.
	IdleTimeoutMs int
}

// fleet validates the fleet key.
func (l *loader) fleet(v any, path []string) (Fleet, error) {
	var f Fleet
	if v == nil {
		return f, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return f, l.failAt(path, ErrType, "expected a mapping with startup and idleTimeoutMs, got "+yamlnode.Value(v))
	}
	for _, key := range l.sorted(m, path) {
		kp := append(slices.Clone(path), key)
		switch v := m[key]; key {
		case "startup":
			s, ok := v.(string)
			if !ok || !slices.Contains(FleetStartups, s) {
				return f, l.failAt(kp, ErrInvalid, fmt.Sprintf("expected eager or lazy, got %s", yamlnode.Value(v)))
			}
			f.Startup = s
		case "idleTimeoutMs":
			n, ok := millis(v)
			if !ok {
				return f, l.failAt(kp, ErrInvalid, "expected a positive number of milliseconds (at most 2147483647), got "+yamlnode.Value(v))
			}
			f.IdleTimeoutMs = n
		default:
			return f, l.failAt(kp, ErrUnknownKey, "unknown key: expected startup or idleTimeoutMs")
		}
	}
	return f, nil
}

// millis reads a positive millisecond count from a YAML number or (from --set and the
// environment) a string.
func millis(v any) (int, bool) {
	var f float64
	switch v := v.(type) {
	case int:
		f = float64(v)
	case int64:
		f = float64(v)
	case uint64:
		f = float64(v)
	case float64:
		f = v
	case string:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, false
		}
		f = n
	default:
		return 0, false
	}
	if f < 1 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}
