package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cordisgo/harness/internal/suggest"
	"github.com/cordisgo/harness/plugins/remote"
)

// didYouMean returns the name of names closest to name, if one is close enough to be a
// likely typo, or "".
func didYouMean(name string, names []string) string {
	if best := suggest.Closest(name, names, suggest.Options{Max: 1}); len(best) > 0 {
		return best[0]
	}
	return ""
}

// unknownServerError is a server name that the profile (or the host) does not have. It
// lists the names it knows and a likely intended one. Its remote code is not_found.
type unknownServerError struct {
	name  string
	where string // `in profile "web"`, `on the host at http://…`
	known []string
}

func (e *unknownServerError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no MCP server %q %s", e.name, e.where)
	known := slices.Clone(e.known)
	slices.Sort(known)
	known = slices.Compact(known)
	if len(known) == 0 {
		b.WriteString(": it has no MCP servers")
		return b.String()
	}
	fmt.Fprintf(&b, "; known: %s", strings.Join(known, ", "))
	if s := didYouMean(e.name, known); s != "" {
		fmt.Fprintf(&b, " (did you mean %q?)", s)
	}
	return b.String()
}

// RemoteCode makes the remote API answer not_found.
func (e *unknownServerError) RemoteCode() remote.Code { return remote.CodeNotFound }
