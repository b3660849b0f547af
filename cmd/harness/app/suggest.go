package app

import "github.com/cordisgo/harness/internal/suggest"

// didYouMean returns the name of names closest to name, if one is close enough to be a
// likely typo, or "".
func didYouMean(name string, names []string) string {
	if best := suggest.Closest(name, names, suggest.Options{Max: 1}); len(best) > 0 {
		return best[0]
	}
	return ""
}
