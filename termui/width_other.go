//go:build !unix

package termui

import "io"

// Width returns 0: without the terminal's size, output is not wrapped (COLUMNS
// still sets a width where the caller reads it).
func Width(io.Writer) int { return 0 }

// Height returns 0: the terminal's size is not known here.
func Height(io.Writer) int { return 0 }
