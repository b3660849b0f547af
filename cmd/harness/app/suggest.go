package app

import "github.com/cordisgo/harness/internal/suggest"

// nearest renders the name of names closest to name as ` (did you mean "x"?)`, when one is
// close enough to be a likely typo; "" otherwise.
func nearest(name string, names []string) string {
	if p := suggest.Phrase(suggest.Closest(name, names, suggest.Options{Max: 1})); p != "" {
		return " (" + p + ")"
	}
	return ""
}
