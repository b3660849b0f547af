package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/suggest"
)

// Limits and defaults of grep.
const (
	defaultGrepResults = 200
	maxGrepResults     = 5000
	maxGrepContext     = 20
	maxGrepLineBytes   = 500       // a longer line is cut in the output
	grepChunk          = 256 << 10 // files are searched in pieces of about this size
	// grepWindow bounds the files in flight (found, not yet reported), which bounds the
	// memory a search holds whatever the tree.
	grepWindow = 256
)

type grepInput struct {
	Pattern    string `json:"pattern" jsonschema:"a regular expression (Go RE2 syntax, like ripgrep's: \\b, \\d, (?i) and so on); it is matched line by line"`
	Path       string `json:"path,omitempty" jsonschema:"a file or directory to search (default: the workspace root)"`
	Glob       string `json:"glob,omitempty" jsonschema:"search only files matching this glob (e.g. *.go or src/**/*.ts); one without / matches the file name"`
	Type       string `json:"type,omitempty" jsonschema:"search only files of this type: go, js, ts, py, rust, java, c, cpp, md, json, yaml, toml, sh, html, css, sql, proto, rb, php"`
	IgnoreCase bool   `json:"ignoreCase,omitempty" jsonschema:"match without regard to case"`
	Context    int    `json:"context,omitempty" jsonschema:"lines of context before and after each match (at most 20)"`
	Before     int    `json:"before,omitempty" jsonschema:"lines of context before each match"`
	After      int    `json:"after,omitempty" jsonschema:"lines of context after each match"`
	Output     string `json:"output,omitempty" jsonschema:"content (matching lines as path:line:text, the default), files (the files that match) or count (path:number of matching lines)"`
	MaxResults int    `json:"maxResults,omitempty" jsonschema:"the most matching lines (content), files (files) or counts (count) returned (default 200, at most 5000)"`
}

// fileTypes are grep's type filters: file name globs per type, as ripgrep's --type names
// them.
var fileTypes = map[string][]string{
	"go": {"*.go"}, "js": {"*.js", "*.mjs", "*.cjs", "*.jsx"}, "ts": {"*.ts", "*.tsx", "*.mts", "*.cts"},
	"py": {"*.py", "*.pyi"}, "rust": {"*.rs"}, "java": {"*.java"}, "c": {"*.c", "*.h"},
	"cpp": {"*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"}, "md": {"*.md", "*.markdown"},
	"json": {"*.json"}, "yaml": {"*.yaml", "*.yml"}, "toml": {"*.toml"}, "sh": {"*.sh", "*.bash"},
	"html": {"*.html", "*.htm"}, "css": {"*.css", "*.scss"}, "sql": {"*.sql"}, "proto": {"*.proto"},
	"rb": {"*.rb"}, "php": {"*.php"},
}

// grepQuery is a compiled grep: what to match, in which files, what to print.
type grepQuery struct {
	re  *regexp.Regexp
	lit []byte // a literal every match contains; nil when there is none
	// fold: lit is in lower case and found whatever the case of the text's ASCII letters
	// (a pattern under (?i)); exact: a line holding lit matches (the pattern is lit alone).
	fold, exact   bool
	before, after int
	output        string
	max           int
	keep          func(rel string) bool // nil: every file
}

// compileGrep checks and compiles a grep call's arguments.
func compileGrep(in grepInput) (*grepQuery, error) {
	q := &grepQuery{output: in.Output, max: in.MaxResults}
	switch q.output {
	case "":
		q.output = "content"
	case "content", "files", "count":
	default:
		return nil, fmt.Errorf("output %q: expected content, files or count", in.Output)
	}
	switch {
	case q.max == 0:
		q.max = defaultGrepResults
	case q.max < 0 || q.max > maxGrepResults:
		return nil, fmt.Errorf("maxResults %d: expected 1 to %d", q.max, maxGrepResults)
	}
	if in.Context < 0 || in.Before < 0 || in.After < 0 || in.Context > maxGrepContext || in.Before > maxGrepContext || in.After > maxGrepContext {
		return nil, fmt.Errorf("context lines: expected 0 to %d", maxGrepContext)
	}
	q.before, q.after = max(in.Before, in.Context), max(in.After, in.Context)
	expr := in.Pattern
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	// (?m): ^ and $ match at line ends, since a file is searched a piece at a time.
	re, err := regexp.Compile("(?m)" + expr)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", in.Pattern, err)
	}
	q.re = re
	if tree, err := syntax.Parse("(?m)"+expr, syntax.Perl); err == nil {
		tree = tree.Simplify()
		if lit, fold := requiredLiteral(tree); lit != "" && !strings.ContainsAny(lit, "\r\n") {
			q.lit, q.fold = []byte(lit), fold
			q.exact = tree.Op == syntax.OpLiteral
		}
	}
	var globs []func(string) bool
	if in.Type != "" {
		pats, ok := fileTypes[in.Type]
		if !ok {
			names := slices.Sorted(maps.Keys(fileTypes))
			msg := fmt.Sprintf("type %q: expected one of %s", in.Type, strings.Join(names, ", "))
			if near := suggest.Closest(in.Type, names, suggest.Options{}); len(near) > 0 {
				msg += "; " + suggest.Phrase(near)
			}
			return nil, errors.New(msg)
		}
		for _, p := range pats {
			globs = append(globs, globMatcher(p))
		}
	}
	typeOK := func(rel string) bool {
		return len(globs) == 0 || slices.ContainsFunc(globs, func(m func(string) bool) bool { return m(rel) })
	}
	globOK := func(string) bool { return true }
	if in.Glob != "" {
		globOK = globMatcher(strings.TrimPrefix(in.Glob, "./"))
	}
	if in.Type != "" || in.Glob != "" {
		q.keep = func(rel string) bool { return typeOK(rel) && globOK(rel) }
	}
	return q, nil
}

// requiredLiteral returns a literal that every match of re contains (the longest it finds),
// or "" when it finds none. fold says the literal is case-folded: it is returned in lower
// case, and only when an ASCII search finds every match of it (ASCII only, and no k or s,
// which Unicode folds to the Kelvin sign and the long s).
func requiredLiteral(re *syntax.Regexp) (lit string, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return string(re.Rune), false
		}
		b := make([]byte, len(re.Rune))
		for i, r := range re.Rune {
			if r >= utf8.RuneSelf || strings.ContainsRune("kKsS", r) {
				return "", false
			}
			b[i] = lowerASCII(byte(r))
		}
		return string(b), true
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if l, f := requiredLiteral(sub); len(l) > len(lit) {
				lit, fold = l, f
			}
		}
	}
	return lit, fold
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// grep is the grep tool.
func (s *Server) grep(cx context.Context, _ *mcp.CallToolRequest, in grepInput) (*mcp.CallToolResult, any, error) {
	q, err := compileGrep(in)
	if err != nil {
		return nil, nil, err
	}
	rel, err := s.root.rel(in.Path)
	if err != nil {
		return nil, nil, err
	}
	out, err := s.search(cx, rel, q)
	if err != nil {
		return nil, nil, fileError(in.Path, err)
	}
	return text(out), nil, nil
}

// fileHits is what one file contributed: its output lines and its count of matching lines.
type fileHits struct {
	rel   string
	lines []hitLine
	count int
}

// hitLine is a line of grep's output: "path:n:text" for a match, "path-n-text" for context,
// "--" between groups of lines.
type hitLine struct {
	text  string
	match bool
}

// search runs q over the file or tree at rel and returns the report.
func (s *Server) search(cx context.Context, rel string, q *grepQuery) (string, error) {
	fi, err := s.root.r.Stat(rel)
	if err != nil {
		return "", err
	}
	var results []fileHits
	total := 0
	more := false
	// take adds one file's hits in order and says whether to go on: past maxResults, the
	// next file with hits (or a file's hit beyond it) only says there were more.
	take := func(h fileHits) bool {
		if h.count == 0 {
			return true
		}
		if total >= q.max {
			more = true
			return false
		}
		if q.output != "content" {
			total++
			results = append(results, h)
			return true
		}
		room := q.max - total
		if h.count > room {
			more = true
			matched := 0
			for i, l := range h.lines {
				if l.match {
					if matched == room {
						h.lines = h.lines[:i]
						break
					}
					matched++
				}
			}
		}
		total += min(h.count, room)
		results = append(results, h)
		return !more
	}
	if !fi.IsDir() {
		f, err := s.root.r.Open(rel)
		if err != nil {
			return "", err
		}
		h, err := grepFile(f, rel, q, make([]byte, 0, grepChunk+4096), new([]byte))
		_ = f.Close()
		if err != nil {
			return "", err
		}
		take(h)
	} else if err := s.searchTree(cx, rel, q, take); err != nil {
		return "", err
	}
	return report(results, q, more), nil
}

// searchTree searches every file below dir on a pool of workers and hands each file's
// hits to take in the walk's order until take says to stop.
func (s *Server) searchTree(pcx context.Context, dir string, q *grepQuery, take func(fileHits) bool) error {
	cx, cancel := context.WithCancel(pcx)
	defer cancel()
	type job struct {
		seq int
		f   walkFile
	}
	type done struct {
		seq int
		h   fileHits
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	jobs := make(chan job, workers*4)
	results := make(chan done, workers*4)
	window := make(chan struct{}, grepWindow) // files in flight
	var walkErr error
	go func() {
		defer close(jobs)
		seq := 0
		walkErr = walker{s: s, keepFile: q.keep}.walk(cx, dir, func(f walkFile) bool {
			select {
			case window <- struct{}{}:
			case <-cx.Done():
				f.dir.release()
				return false
			}
			jobs <- job{seq, f}
			seq++
			return true
		})
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			buf, low := make([]byte, 0, grepChunk+4096), new([]byte)
			for j := range jobs {
				var h fileHits
				if cx.Err() == nil {
					if f, err := j.f.dir.r.Open(j.f.name); err == nil {
						h, _ = grepFile(f, j.f.rel, q, buf, low) // an unreadable file is skipped
						_ = f.Close()
					}
				}
				j.f.dir.release()
				results <- done{j.seq, h}
			}
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	pending := map[int]fileHits{}
	next := 0
	stopped := false
	for d := range results {
		pending[d.seq] = d.h
		for {
			h, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-window
			if !stopped && !take(h) {
				stopped = true
				cancel()
			}
		}
	}
	if walkErr != nil && !errors.Is(walkErr, context.Canceled) {
		return walkErr
	}
	return pcx.Err()
}

// report formats the hits.
func report(results []fileHits, q *grepQuery, more bool) string {
	if len(results) == 0 {
		return "no matches (files .gitignore ignores and binary files are skipped)"
	}
	var b strings.Builder
	for i, h := range results {
		switch q.output {
		case "files":
			b.WriteString(h.rel)
		case "count":
			fmt.Fprintf(&b, "%s:%d", h.rel, h.count)
		default:
			if i > 0 && (q.before > 0 || q.after > 0) {
				b.WriteString("--\n")
			}
			for j, l := range h.lines {
				if j > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(l.text)
			}
		}
		b.WriteByte('\n')
	}
	if more {
		fmt.Fprintf(&b, "[results cut at %d: narrow the pattern or the path, or raise maxResults]\n", q.max)
	}
	return b.String()
}

// grepFile searches one file, a piece of about grepChunk bytes at a time (buf is the
// worker's buffer), so that a file of any size costs the same memory. A file whose first
// piece holds a NUL byte is binary and skipped. low is the worker's buffer for a piece in
// lower case.
func grepFile(r io.Reader, rel string, q *grepQuery, buf []byte, low *[]byte) (fileHits, error) {
	g := &fileGrep{q: q, h: fileHits{rel: rel}, line: 1, low: low}
	buf = buf[:0]
	first := true
	for {
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		eof := err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF)
		if err != nil && !eof {
			return g.h, err
		}
		if first {
			first = false
			if bytes.IndexByte(buf[:min(len(buf), sniffBytes)], 0) >= 0 {
				return fileHits{rel: rel}, nil
			}
		}
		end := len(buf)
		if !eof {
			if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
				end = i + 1
			} else if len(buf) < cap(buf) {
				continue
			} else {
				// A line longer than the buffer: grow it.
				buf = slices.Grow(buf, cap(buf))
				continue
			}
		}
		if !g.region(buf[:end]) {
			return g.h, nil
		}
		rest := copy(buf, buf[end:])
		buf = buf[:rest]
		if eof {
			g.flushAfter(nil, -1)
			return g.h, nil
		}
	}
}

// fileGrep is the state of one file's search across its pieces.
type fileGrep struct {
	q          *grepQuery
	h          fileHits
	line       int // the number of the current piece's first line
	printed    int // the last line printed (match or context)
	afterUntil int // context lines are printed up to this line
	afterPos   int // offset in the current piece of line printed+1, while afterUntil > printed
	tail       []numbered
	low        *[]byte // the piece in lower case (q.fold), the worker's buffer
}

type numbered struct {
	n    int
	text string
}

// region searches one piece, whole lines only; false means the file has given enough.
func (g *fileGrep) region(buf []byte) bool {
	q := g.q
	pos, cur, curLine := 0, 0, g.line
	g.afterPos = 0
	hay := buf // where the literal is looked for
	if q.fold {
		*g.low = slices.Grow((*g.low)[:0], len(buf))[:len(buf)]
		hay = *g.low
		for i, c := range buf {
			hay[i] = lowerASCII(c)
		}
	}
	for pos < len(buf) {
		var at, end int
		if q.lit != nil {
			i := bytes.Index(hay[pos:], q.lit)
			if i < 0 {
				break
			}
			at, end = pos+i, -1
			if q.exact {
				end = at + len(q.lit) // the literal is the match
			}
		} else {
			loc := q.re.FindIndex(buf[pos:])
			if loc == nil {
				break
			}
			at, end = pos+loc[0], pos+loc[1]
		}
		ls := bytes.LastIndexByte(buf[:at], '\n') + 1
		le := len(buf)
		if i := bytes.IndexByte(buf[at:], '\n'); i >= 0 {
			le = at + i
		}
		line := bytes.TrimSuffix(buf[ls:le], []byte("\r"))
		// A match found in the piece that ends within its line is the line's; otherwise
		// (a literal, or a match running over the line's end) the line is checked alone.
		matched := end >= 0 && end <= le || q.re.Match(line)
		if matched {
			curLine += bytes.Count(buf[cur:ls], []byte("\n"))
			cur = ls
			g.flushAfter(buf, curLine-1)
			g.match(buf, ls, curLine, line)
			g.afterPos = min(le+1, len(buf))
			if q.output == "files" || q.output == "content" && g.h.count > q.max {
				return false
			}
		}
		pos = le + 1
	}
	g.flushAfter(buf, -1)
	g.line = curLine + bytes.Count(buf[cur:], []byte("\n"))
	if q.before > 0 && q.output == "content" {
		g.keepTail(buf)
	}
	return true
}

// match records the matching line n (starting at ls in buf), after its before-context.
func (g *fileGrep) match(buf []byte, ls, n int, line []byte) {
	g.h.count++
	if g.q.output != "content" {
		return
	}
	from := max(g.printed+1, n-g.q.before)
	if g.printed > 0 && from > g.printed+1 && (g.q.before > 0 || g.q.after > 0) {
		g.h.lines = append(g.h.lines, hitLine{text: "--"})
	}
	if from < n {
		for _, l := range g.linesBefore(buf, ls, n, from) {
			g.emit(l.n, '-', []byte(l.text))
		}
	}
	g.emit(n, ':', line)
	g.afterUntil = n + g.q.after
}

// linesBefore returns lines from..n-1 ending just before offset ls of buf (line n), from the
// piece or, before its start, from the previous piece's tail.
func (g *fileGrep) linesBefore(buf []byte, ls, n, from int) []numbered {
	var out []numbered
	end := ls
	k := n - 1
	for k >= from && end > 0 {
		start := bytes.LastIndexByte(buf[:end-1], '\n') + 1
		out = append(out, numbered{k, string(bytes.TrimSuffix(buf[start:end-1], []byte("\r")))})
		end = start
		k--
	}
	for i := len(g.tail) - 1; i >= 0 && k >= from; i-- {
		if g.tail[i].n == k {
			out = append(out, g.tail[i])
			k--
		}
	}
	slices.Reverse(out)
	return out
}

// flushAfter prints the after-context lines due up to line limit (-1: to the end of the
// piece, or, with buf nil, nothing more: the file ended).
func (g *fileGrep) flushAfter(buf []byte, limit int) {
	for g.printed < g.afterUntil && (limit < 0 || g.printed < limit) && g.afterPos < len(buf) {
		end := len(buf)
		if i := bytes.IndexByte(buf[g.afterPos:], '\n'); i >= 0 {
			end = g.afterPos + i
		}
		g.emit(g.printed+1, '-', bytes.TrimSuffix(buf[g.afterPos:end], []byte("\r")))
		g.afterPos = end + 1
	}
}

// keepTail keeps the piece's last lines for the next piece's before-context.
func (g *fileGrep) keepTail(buf []byte) {
	var lines []numbered
	end := len(buf)
	n := g.line - 1
	for len(lines) < g.q.before && end > 0 && n > 0 {
		start := bytes.LastIndexByte(buf[:end-1], '\n') + 1
		lines = append(lines, numbered{n, string(bytes.TrimSuffix(buf[start:end-1], []byte("\r")))})
		end = start
		n--
	}
	slices.Reverse(lines)
	g.tail = lines
}

// emit appends one output line: path:n:text for a match, path-n-text for context.
func (g *fileGrep) emit(n int, sep byte, line []byte) {
	cut := ""
	if len(line) > maxGrepLineBytes {
		cut = fmt.Sprintf(" […+%d bytes]", len(line)-maxGrepLineBytes)
		line = line[:maxGrepLineBytes]
	}
	g.h.lines = append(g.h.lines, hitLine{text: fmt.Sprintf("%s%c%d%c%s%s", g.h.rel, sep, n, sep, validUTF8(line), cut), match: sep == ':'})
	g.printed = n
}
