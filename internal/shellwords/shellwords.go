// Package shellwords splits a command line into words as a POSIX shell would, without a
// shell. Its functions are pure and safe for concurrent use.
package shellwords

import (
	"errors"
	"strings"
)

// Split splits a command line into words the way a POSIX shell
// tokenises one, but without running a shell: no variables, globs, pipes,
// redirections or command substitution; every character that is not
// quoting or white space is taken literally.
//
//   - Spaces, tabs and newlines separate words.
//   - 'single quotes' keep everything up to the next single quote.
//   - "double quotes" keep everything up to the next unescaped double
//     quote; inside them a backslash escapes only $, `, ", \ and a newline
//     (which it removes), and is literal before any other character.
//   - Outside quotes a backslash keeps the next character literally; a
//     backslash before a newline removes both.
//   - Quotes next to other text join it into one word, and an empty pair
//     (” or "") is an empty word.
//
// An unterminated quote or a trailing backslash is an error.
func Split(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool // cur holds a word, possibly empty ("")
	)
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r':
			flush()
		case '\\':
			if i+1 == len(s) {
				return nil, errors.New("trailing backslash")
			}
			i++
			if s[i] != '\n' {
				cur.WriteByte(s[i])
				inWord = true
			}
		case '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case '"':
			inWord = true
			i++
			for ; ; i++ {
				if i == len(s) {
					return nil, errors.New("unterminated double quote")
				}
				if s[i] == '"' {
					break
				}
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
					if s[i] != '\n' {
						cur.WriteByte(s[i])
					}
					continue
				}
				cur.WriteByte(s[i])
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, nil
}
