// Package suggest finds the names a mistyped name was probably meant to be, for the
// "did you mean" of every error that names something unknown: configuration keys, tools,
// servers. It is the project's one edit distance.
//
// Every function is pure and safe for concurrent use.
package suggest

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Distance is the edit distance between a and b in half edits (optimal string
// alignment over bytes): an insertion, a deletion, a substitution or a transposition of two
// adjacent bytes costs 2; a substitution that only changes a letter's case, or '_' for '-'
// (and the other way round), costs 1. Names are ASCII; other bytes compare as bytes.
func Distance(a, b string) int {
	prevprev := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = 2 * j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = 2 * i
		for j := 1; j <= len(b); j++ {
			cur[j] = min(prev[j]+2, cur[j-1]+2, prev[j-1]+substitution(a[i-1], b[j-1]))
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prevprev[j-2]+2) // a transposition
			}
		}
		prevprev, prev, cur = prev, cur, prevprev
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

// Options tunes [Closest]. The zero value is ready to use.
type Options struct {
	// Max is how many names Closest returns at most (default 3).
	Max int
	// Alias, when set, gives a shorter form of a candidate that name may also have meant
	// (the bare tool name of "mcp__ev__get-sum" is "get-sum"); a candidate whose alias is
	// within one edit of name counts as half an edit farther than its alias. "" means none.
	Alias func(candidate string) string
}

// Closest returns the names of candidates close to name, nearest first (ties by name), at
// most o.Max of them; name itself is never returned. A candidate is close when its
// [Distance] is at most one edit per five bytes of name, at least one edit and at most
// three.
func Closest(name string, candidates []string, o Options) []string {
	limit := 2 * max(1, min(3, len(name)/5))
	type scored struct {
		name string
		cost int
	}
	var found []scored
	for _, c := range candidates {
		d := Distance(name, c)
		if o.Alias != nil {
			if a := o.Alias(c); a != "" {
				if ad := Distance(name, a); ad <= 2 {
					d = min(d, ad+1)
				}
			}
		}
		if d > 0 && d <= limit {
			found = append(found, scored{c, d})
		}
	}
	slices.SortFunc(found, func(a, b scored) int {
		return cmp.Or(cmp.Compare(a.cost, b.cost), strings.Compare(a.name, b.name))
	})
	found = slices.CompactFunc(found, func(a, b scored) bool { return a.name == b.name })
	n := o.Max
	if n <= 0 {
		n = 3
	}
	out := make([]string, 0, min(len(found), n))
	for _, s := range found[:min(len(found), n)] {
		out = append(out, s.name)
	}
	return out
}

// Phrase renders suggestions for an error message: `did you mean "a"?`, `did you mean "a"
// or "b"?`, `did you mean "a", "b" or "c"?`, and "" for none.
func Phrase(names []string) string {
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
	return "did you mean " + list + "?"
}
