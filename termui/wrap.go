package termui

import (
	"strings"
	"unicode/utf8"
)

// WrapWords breaks s into lines of at most width runes, at spaces where it can and inside
// a word longer than width. width < 1 means one line.
func WrapWords(s string, width int) []string {
	s = strings.TrimSpace(s)
	if width < 1 || utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	var lines []string
	var cur []rune
	flush := func() {
		lines = append(lines, strings.TrimRight(string(cur), " "))
		cur = cur[:0]
	}
	for _, word := range strings.Fields(s) {
		w := []rune(word)
		if len(cur) > 0 && len(cur)+1+len(w) > width {
			flush()
		}
		for len(w) > width { // a word longer than a line
			if len(cur) > 0 {
				flush()
			}
			lines = append(lines, string(w[:width]))
			w = w[width:]
		}
		if len(cur) > 0 {
			cur = append(cur, ' ')
		}
		cur = append(cur, w...)
	}
	if len(cur) > 0 {
		flush()
	}
	return lines
}
