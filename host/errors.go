package host

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cordisgo/harness/internal/suggest"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/plugins/remote"
)

// UnknownServerError is a server name that a profile (or a host) does not have. Its
// message lists the names it knows and a likely intended one. Its remote code is
// not_found.
type UnknownServerError struct {
	// Name is the name asked for.
	Name string
	// Where says where it was looked for: `in profile "web"`, `on the host at http://…`.
	Where string
	// Known are the server names there are.
	Known []string
}

func (e *UnknownServerError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no MCP server %q %s", e.Name, e.Where)
	known := slices.Clone(e.Known)
	slices.Sort(known)
	known = slices.Compact(known)
	if len(known) == 0 {
		b.WriteString(": it has no MCP servers")
		return b.String()
	}
	fmt.Fprintf(&b, "; known: %s", strings.Join(known, ", "))
	if p := suggest.Phrase(suggest.Closest(e.Name, known, suggest.Options{Max: 1})); p != "" {
		fmt.Fprintf(&b, " (%s)", p)
	}
	return b.String()
}

// RemoteCode makes the remote API answer not_found.
func (e *UnknownServerError) RemoteCode() remote.Code { return remote.CodeNotFound }

// RestartTimeoutError is a restart whose server neither connected nor failed in time. Its
// remote code is timeout.
type RestartTimeoutError struct {
	// Name is the server's name.
	Name string
	// Timeout is how long the restart waited.
	Timeout time.Duration
	// Last is the server's last status.
	Last mcpmanager.View
}

func (e *RestartTimeoutError) Error() string {
	msg := fmt.Sprintf("mcp server %q restarted but is still %s after %v", e.Name, e.Last.Status, e.Timeout)
	if e.Last.Error != "" {
		msg += ": " + e.Last.Error
	}
	return msg + " (--timeout to wait longer)"
}

// RemoteCode makes the remote API answer timeout.
func (e *RestartTimeoutError) RemoteCode() remote.Code { return remote.CodeTimeout }
