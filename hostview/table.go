package hostview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/cordisgo/harness/internal/termsafe"
	"github.com/cordisgo/harness/termui"
)

// Table prints rows (the first is the header) as a table on w, every cell whole and shown
// safe (servers' text): the last column is wrapped to width, its continuation lines
// indented under it; a width of 0 wraps nothing (off a terminal).
func Table(w io.Writer, width int, rows [][]string) error {
	const pad = 2
	for _, r := range rows { // servers' text: nothing reaches the terminal as a control
		for i := range r {
			r[i] = termsafe.Line(r[i])
		}
	}
	offset := 0
	if len(rows) > 0 {
		for col := 0; col < len(rows[0])-1; col++ {
			cw := 0
			for _, r := range rows {
				cw = max(cw, utf8.RuneCountInString(r[col]))
			}
			offset += cw + pad
		}
	}
	lastWidth := 0
	if width > 0 {
		lastWidth = max(width-offset, 24) // narrower than that is not readable: let the terminal wrap
	}
	tw := tabwriter.NewWriter(w, 0, 4, pad, ' ', 0)
	for _, r := range rows {
		n := len(r) - 1
		lines := termui.WrapWords(r[n], lastWidth)
		fmt.Fprintf(tw, "%s\t%s\n", strings.Join(r[:n], "\t"), lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(tw, "%s%s\n", strings.Repeat("\t", n), l)
		}
	}
	return tw.Flush()
}

// Columns prints rows under header as aligned columns on w, each cell shown safe (servers'
// text).
func Columns(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		for i := range r {
			r[i] = termsafe.Line(r[i])
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}
