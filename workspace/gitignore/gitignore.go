// Package gitignore decides which paths of a tree git would ignore: the patterns of
// .gitignore files (each applying to its own directory and below) and of an exclude file
// (.git/info/exclude), with git's rules — comments, escapes, trailing spaces, negation with
// '!', directory-only patterns with a trailing '/', patterns anchored by a '/' anywhere but
// at their end, '*', '?', '[…]' and '**' — and the last matching pattern winning.
//
// Patterns are translated once, when a file is parsed, into doublestar patterns
// (github.com/bmatcuk/doublestar/v4), which match with the same meaning of '*' (never
// across '/'), '?', classes and '**'. What git adds on top is this package's: a pattern
// without a '/' matches a name at any depth, one with a '/' is relative to its file's
// directory, braces are literal.
//
// A walker asks [Stack.Ignored] for each entry and does not descend into an ignored
// directory: as in git, a file below an excluded directory cannot be re-included.
//
// # Concurrency
//
// A [File] is immutable once parsed; a [Stack] is a value that [Stack.Push] extends without
// changing the receiver, so a walker may hand one to concurrent workers.
package gitignore

import (
	"bufio"
	"bytes"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// File holds the patterns of one ignore file.
type File struct {
	// dir is the directory the patterns are relative to: a slash path relative to the
	// walk's root, "" for the root itself.
	dir      string
	patterns []pattern
}

type pattern struct {
	glob    string // a doublestar pattern matched against the path relative to dir
	negate  bool   // '!': a match re-includes
	dirOnly bool   // trailing '/': matches directories only
}

// Parse reads the patterns of an ignore file found in dir (a slash path relative to the
// walk's root, "" or "." for the root). Lines that are no valid pattern are skipped, as git
// skips them.
func Parse(dir string, data []byte) *File {
	if dir == "." {
		dir = ""
	}
	f := &File{dir: strings.Trim(dir, "/")}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if p, ok := parseLine(sc.Text()); ok {
			f.patterns = append(f.patterns, p)
		}
	}
	return f
}

// parseLine translates one line of an ignore file.
func parseLine(line string) (pattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpaces(line)
	if line == "" || line[0] == '#' {
		return pattern{}, false
	}
	var p pattern
	switch {
	case line[0] == '!':
		p.negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return pattern{}, false
	}
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	// Braces are literal in git; doublestar would expand them.
	line = strings.NewReplacer("{", `\{`, "}", `\}`).Replace(line)
	if !anchored {
		line = "**/" + line
	}
	if !doublestar.ValidatePattern(line) {
		return pattern{}, false
	}
	p.glob = line
	return p, true
}

// trimTrailingSpaces removes the trailing spaces of a line unless they are escaped with a
// backslash, as git does.
func trimTrailingSpaces(s string) string {
	end := len(s)
	for end > 0 && s[end-1] == ' ' {
		if end >= 2 && s[end-2] == '\\' {
			// "\ " keeps one space; the backslash goes.
			return s[:end-2] + " "
		}
		end--
	}
	return s[:end]
}

// match reports whether f decides rel (a slash path relative to the walk's root) and
// whether it ignores it: the last matching pattern of the file wins.
func (f *File) match(rel string, isDir bool) (decided, ignored bool) {
	sub := rel
	if f.dir != "" {
		if !strings.HasPrefix(rel, f.dir+"/") {
			return false, false
		}
		sub = rel[len(f.dir)+1:]
	}
	for i := len(f.patterns) - 1; i >= 0; i-- {
		p := f.patterns[i]
		if p.dirOnly && !isDir {
			continue
		}
		if doublestar.MatchUnvalidated(p.glob, sub) {
			return true, !p.negate
		}
	}
	return false, false
}

// Stack is the ignore files that apply at one place of a walk, outermost first: the
// exclude file, then the .gitignore files of the root and of each directory down to here.
// The zero value ignores nothing.
type Stack []*File

// Push returns the stack with f on top (f nil: the stack itself). It never changes s's
// elements, so stacks of sibling directories share their common part safely.
func (s Stack) Push(f *File) Stack {
	if f == nil || len(f.patterns) == 0 {
		return s
	}
	return append(s[:len(s):len(s)], f)
}

// Ignored reports whether rel (a slash path relative to the walk's root, of a directory
// when isDir) is ignored: the innermost file with a matching pattern decides, and in it the
// last matching pattern.
func (s Stack) Ignored(rel string, isDir bool) bool {
	rel = path.Clean(strings.TrimPrefix(rel, "/"))
	for i := len(s) - 1; i >= 0; i-- {
		if decided, ignored := s[i].match(rel, isDir); decided {
			return ignored
		}
	}
	return false
}
