//go:build !unix

package termui

import "io"

// Width returns 0: without the terminal's size, output is not wrapped (COLUMNS
// still sets a width where the caller reads it).
func Width(io.Writer) int { return 0 }
