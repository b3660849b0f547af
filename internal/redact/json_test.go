package redact_test

import (
	"testing"

	"github.com/cordisgo/harness/internal/redact"
)

// Secret-looking keys have their string values masked, at any depth; the rest of the text
// is unchanged, byte for byte.
func TestJSON(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"text":"hi"}`, `{"text":"hi"}`},
		{`{"token": "abcdefghijklmnop", "n": 1}`, `{"token": "[redacted]", "n": 1}`},
		{`{"a":{"apiKey":"sk-123456789012","keep":"x"},"list":[{"password":"hunter2hunter2"}]}`,
			`{"a":{"apiKey":"[redacted]","keep":"x"},"list":[{"password":"[redacted]"}]}`},
		{`{"token":"${secret:gh}"}`, `{"token":"${secret:gh}"}`},         // a reference says where, not what
		{`{"token":`, `{"token":`},                                       // not JSON: unchanged
		{`{"tokens":["a"],"x":"token"}`, `{"tokens":["a"],"x":"token"}`}, // only string values of such keys
		{`{"nested":{"token":{"x":"y"}},"z":"q"}`, `{"nested":{"token":{"x":"y"}},"z":"q"}`},
		{`{"k\"ey":"v","secret":"s3cr3ts3cr3t"}`, `{"k\"ey":"v","secret":"[redacted]"}`},
	}
	for _, c := range cases {
		if got := redact.JSON(c.in); got != c.want {
			t.Errorf("JSON(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
