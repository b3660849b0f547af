package redact_test

import (
	"fmt"

	"github.com/cordisgo/harness/internal/redact"
)

// References are shown as written; literal secrets are not.
func Example() {
	fmt.Println(redact.Value("${secret:evtoken}"))
	fmt.Println(redact.Value("Bearer ${GITHUB_TOKEN}"))
	fmt.Println(redact.Value("ghp_0123456789abcdef"))
	fmt.Println(redact.URL("https://example.com/mcp?page=2"))
	fmt.Println(redact.URL("https://u:hunter22@example.com/mcp?token=abc"))
	// Output:
	// ${secret:evtoken}
	// Bearer ${GITHUB_TOKEN}
	// [redacted]
	// https://example.com/mcp?page=2
	// https://u:[redacted]@example.com/mcp?token=[redacted]
}
