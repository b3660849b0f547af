package workspace

import (
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Limits of the diffs the write tools return.
const (
	diffContext  = 3
	maxDiffBytes = 256 << 10 // a longer diff is cut, with a marker
	// maxLCSBytes bounds the files write_file compares line by line (a longest common
	// subsequence); larger ones are reported by size.
	maxLCSBytes = 8 << 20
)

// textEdit replaces old[start:end] with text. Edits handed to unifiedDiff are sorted and do
// not overlap.
type textEdit struct {
	start, end int
	text       string
}

// wholeFileDiff is write_file's diff of old and new: line by line for files up to
// maxLCSBytes together, else a line saying what changed in size.
func wholeFileDiff(name, old, new string) string {
	if old == new {
		return ""
	}
	if len(old)+len(new) > maxLCSBytes {
		return fmt.Sprintf("(the file is too large to compare line by line: %d bytes before, %d after)\n", len(old), len(new))
	}
	var edits []textEdit
	for _, e := range udiff.Lines(old, new) {
		edits = append(edits, textEdit{e.Start, e.End, e.New})
	}
	return unifiedDiff(name, old, edits)
}

// region is a run of whole lines an edit (or several touching the same lines) replaces.
type region struct {
	first, last int    // 0-based old line numbers; last < first: none (a pure insertion)
	from, to    int    // the lines' byte range in old
	text        string // what replaces them
}

// unifiedDiff returns the unified diff (3 lines of context, "a/NAME" and "b/NAME") of
// applying edits to old, without comparing anything: the edits say what changed. It reads
// old once, front to back, so a diff of a few edits in a large file costs what the edits
// cost, not what the file does.
func unifiedDiff(name, old string, edits []textEdit) string {
	regions := lineRegions(old, edits)
	if len(regions) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", name, name)
	delta := 0 // new line number minus old line number, before the current hunk
	for i := 0; i < len(regions); {
		// A hunk holds the regions whose gaps are at most two contexts wide.
		j := i + 1
		for j < len(regions) && regions[j].first-(regions[j-1].last+1) <= 2*diffContext {
			j++
		}
		hunk := regions[i:j]
		startOff, startLine := contextBefore(old, hunk[0].from, hunk[0].first, diffContext)
		endOff := contextAfter(old, hunk[len(hunk)-1].to, diffContext)
		var body strings.Builder
		oldCount, newCount := 0, 0
		pos := startOff
		for _, r := range hunk {
			n := writeLines(&body, ' ', old[pos:r.from])
			oldCount += n
			newCount += n
			o, nw := writeRegion(&body, old[r.from:r.to], r.text)
			oldCount += o
			newCount += nw
			pos = r.to
		}
		n := writeLines(&body, ' ', old[pos:endOff])
		oldCount += n
		newCount += n
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(startLine, oldCount), hunkRange(startLine+delta, newCount))
		b.WriteString(body.String())
		for _, r := range hunk {
			delta += lineCount(r.text) - (r.last - r.first + 1)
		}
		if b.Len() > maxDiffBytes {
			break
		}
		i = j
	}
	return capDiff(b.String())
}

// writeRegion writes the lines of a region, old replaced by new, compared line by line so
// that the lines they share are context, and returns the old and new line counts.
func writeRegion(b *strings.Builder, old, new string) (int, int) {
	oldCount, newCount, pos := 0, 0, 0
	for _, e := range udiff.Lines(old, new) {
		n := writeLines(b, ' ', old[pos:e.Start])
		oldCount += n + writeLines(b, '-', old[e.Start:e.End])
		newCount += n + writeLines(b, '+', e.New)
		pos = e.End
	}
	n := writeLines(b, ' ', old[pos:])
	return oldCount + n, newCount + n
}

// capDiff cuts a diff longer than maxDiffBytes at a line end, with a marker.
func capDiff(d string) string {
	if len(d) <= maxDiffBytes {
		return d
	}
	cut := strings.LastIndexByte(d[:maxDiffBytes], '\n') + 1
	return d[:cut] + fmt.Sprintf("[diff cut: %d more bytes]\n", len(d)-cut)
}

// hunkRange is a unified diff's "start,count" (1-based; an empty range names the line
// before it).
func hunkRange(start0, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start0)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start0+1)
	}
	return fmt.Sprintf("%d,%d", start0+1, count)
}

// writeLines writes each line of s prefixed with mark, marking a last line without its
// newline as diff does, and returns how many lines it wrote.
func writeLines(b *strings.Builder, mark byte, s string) int {
	n := 0
	for s != "" {
		i := strings.IndexByte(s, '\n')
		var l string
		if i < 0 {
			l, s = s, ""
		} else {
			l, s = s[:i], s[i+1:]
		}
		b.WriteByte(mark)
		b.WriteString(validString(l))
		b.WriteByte('\n')
		if i < 0 {
			b.WriteString("\\ No newline at end of file\n")
		}
		n++
	}
	return n
}

func validString(s string) string { return string(validUTF8([]byte(s))) }

// lineCount is the number of lines of s (a last line without a newline counts).
func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// contextBefore returns the offset and line number of the line up to n lines before the
// line starting at off (line number line).
func contextBefore(old string, off, line, n int) (int, int) {
	for ; n > 0 && off > 0; n-- {
		off = strings.LastIndexByte(old[:off-1], '\n') + 1
		line--
	}
	return off, line
}

// contextAfter returns the offset just after up to n lines from off (a line's start).
func contextAfter(old string, off, n int) int {
	for ; n > 0 && off < len(old); n-- {
		i := strings.IndexByte(old[off:], '\n')
		if i < 0 {
			return len(old)
		}
		off += i + 1
	}
	return off
}

// lineRegions turns sorted, non-overlapping byte edits of old into whole-line regions,
// joining edits that touch the same lines.
func lineRegions(old string, edits []textEdit) []region {
	var out []region
	counted, line := 0, 0 // line is the number of the line containing offset counted
	lineOf := func(off int) int {
		line += strings.Count(old[counted:off], "\n")
		counted = off
		return line
	}
	for _, e := range edits {
		from := strings.LastIndexByte(old[:e.start], '\n') + 1
		to := e.end
		if to > from && old[to-1] != '\n' || to == from && !strings.HasSuffix(e.text, "\n") {
			to = lineEnd(old, to)
		}
		if n := len(out); n > 0 && from < out[n-1].to {
			// The edit shares a line with the previous region, whose text ends with the
			// old text up to that region's end: one region.
			p := &out[n-1]
			to = max(to, p.to)
			p.text = p.text[:len(p.text)-(p.to-e.start)] + e.text + old[e.end:to]
			p.to = to
			p.widen(old)
			continue
		}
		r := region{first: lineOf(from), from: from, to: to, text: old[from:e.start] + e.text + old[e.end:to]}
		r.widen(old)
		out = append(out, r)
	}
	return out
}

// widen takes in the next line while the region's new text does not end a line (it would
// run into the line after it), and sets last from the region's extent.
func (r *region) widen(old string) {
	for r.text != "" && !strings.HasSuffix(r.text, "\n") && r.to < len(old) {
		end := lineEnd(old, r.to)
		r.text += old[r.to:end]
		r.to = end
	}
	r.last = r.first + lineCount(old[r.from:r.to]) - 1
}

// lineEnd returns the offset just after the line of old that holds off (its newline
// included), or len(old).
func lineEnd(old string, off int) int {
	if i := strings.IndexByte(old[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(old)
}
