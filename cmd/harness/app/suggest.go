package app

import (
	"fmt"
	"slices"
	"strings"
)

// didYouMean returns the name of names closest to name, if one is close enough to be a
// likely typo (an edit distance of at most a third of the name's length, at least 1,
// ignoring case), or "".
func didYouMean(name string, names []string) string {
	best, bestD := "", -1
	limit := max(1, len(name)/3)
	for _, n := range names {
		d := editDistance(strings.ToLower(name), strings.ToLower(n))
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the edit distance between a and b, in bytes: insertions, deletions,
// substitutions and transpositions of adjacent bytes (optimal string alignment).
func editDistance(a, b string) int {
	prevprev := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prevprev[j-2]+1) // a transposition
			}
		}
		prevprev, prev, cur = prev, cur, prevprev
	}
	return prev[len(b)]
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
func (e *unknownServerError) RemoteCode() string { return "not_found" }
