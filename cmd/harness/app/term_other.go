//go:build !unix

package app

import "io"

// terminalColumns returns 0: without the terminal's size, output is not wrapped (COLUMNS
// still sets a width, see outputWidth).
func terminalColumns(io.Writer) int { return 0 }
