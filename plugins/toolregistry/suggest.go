package toolregistry

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// maxSuggestions is how many names an unknown-tool error offers at most.
const maxSuggestions = 3

// suggest returns up to [maxSuggestions] of names close to name, nearest first: by edit
// distance, where '_' for '-' (and the other way round) or a change of letter case costs
// half an edit, and a name whose part after its last "__" is name (the bare name of an MCP
// tool, "get-sum" for "mcp__ev__get-sum") counts as half an edit away. A name is close when
// its distance is at most one edit per five characters of name, and at least one.
func suggest(name string, names []string) []string {
	limit := 2 * max(1, min(3, len(name)/5)) // in half edits
	type candidate struct {
		name string
		cost int
	}
	var found []candidate
	for _, n := range names {
		c := distance(name, n)
		if i := strings.LastIndex(n, "__"); i >= 0 && i+2 < len(n) {
			if d := distance(name, n[i+2:]); d <= 1 {
				c = min(c, 1+d)
			}
		}
		if c > 0 && c <= limit {
			found = append(found, candidate{n, c})
		}
	}
	slices.SortFunc(found, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.cost, b.cost), strings.Compare(a.name, b.name))
	})
	out := make([]string, 0, min(len(found), maxSuggestions))
	for _, c := range found[:min(len(found), maxSuggestions)] {
		out = append(out, c.name)
	}
	return out
}

// distance is the edit distance between a and b in half edits: an insertion, a deletion or
// a substitution costs 2, a substitution of '_' for '-' or of a letter by itself in the
// other case costs 1. Tool names are ASCII.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = 2 * j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = 2 * i
		for j := 1; j <= len(b); j++ {
			cur[j] = min(prev[j]+2, cur[j-1]+2, prev[j-1]+substitution(a[i-1], b[j-1]))
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func substitution(x, y byte) int {
	switch {
	case x == y:
		return 0
	case x|0x20 == y|0x20 && 'a' <= x|0x20 && x|0x20 <= 'z', x == '_' && y == '-', x == '-' && y == '_':
		return 1
	}
	return 2
}

// didYouMean renders suggestions for an error message: `; did you mean "a"?`, `; did you
// mean "a" or "b"?`, "" for none.
func didYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	list := q[0]
	if len(q) > 1 {
		list = strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
	}
	return "; did you mean " + list + "?"
}
