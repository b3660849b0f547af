package termsafe_test

import (
	"fmt"

	"github.com/cordisgo/harness/internal/termsafe"
)

// A server's text that would clear the screen and retitle the terminal is shown instead.
func Example() {
	fmt.Println(termsafe.String("done\x1b[2J\x1b]0;owned\x07"))
	fmt.Println(termsafe.Line("two\nlines"))
	// Output:
	// done\x1b[2J\x1b]0;owned\x07
	// two\nlines
}
