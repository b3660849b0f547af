package agent

import "github.com/cordisgo/harness/internal/redact"

// maskArgs returns the JSON text s with the values of secret-looking keys masked
// ([redact.JSON]): how the agent's events and transcripts show a call's arguments.
func maskArgs(s string) string { return redact.JSON(s) }
