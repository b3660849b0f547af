package toolregistry

import (
	"strconv"
	"unicode/utf8"
)

// blockSize is what a block counts against the output cap: its text or JSON bytes. An image
// block is a short reference and counts nothing.
func blockSize(c Content) int {
	switch c.Type {
	case ContentText:
		return len(c.Text)
	case ContentJSON:
		return len(c.JSON)
	}
	return 0
}

// capOutput cuts the model-facing content of res to at most max bytes of text and JSON. The
// content is read in order: blocks that fit are kept, the first text block that does not fit
// is cut (at a UTF-8 boundary), a JSON block that does not fit is dropped whole, and every
// block after the cut is dropped. A marker "[output truncated: D of T bytes dropped]" ends
// the content (appended to the last text block after a newline); it is not counted. res
// itself is never modified.
func capOutput(res *Result, max int) *Result {
	total := 0
	for _, c := range res.Content {
		total += blockSize(c)
	}
	if total <= max {
		return res
	}
	out := make([]Content, 0, len(res.Content)+1)
	budget := max
	for _, c := range res.Content {
		n := blockSize(c)
		if n <= budget {
			out = append(out, c)
			budget -= n
			continue
		}
		if c.Type == ContentText && budget > 0 {
			k := budget
			for k > 0 && !utf8.RuneStart(c.Text[k]) {
				k--
			}
			if k > 0 {
				out = append(out, Text(c.Text[:k]))
				budget -= k
			}
		}
		break
	}
	kept := max - budget
	marker := "[output truncated: " + strconv.Itoa(total-kept) + " of " + strconv.Itoa(total) + " bytes dropped]"
	if last := len(out) - 1; last >= 0 && out[last].Type == ContentText {
		out[last].Text += "\n" + marker
	} else {
		out = append(out, Text(marker))
	}
	capped := *res
	capped.Content = out
	return &capped
}
