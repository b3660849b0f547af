package redact

import (
	"strings"
	"testing"
)

func TestValue(t *testing.T) {
	for in, want := range map[string]string{
		"":                         "",
		"${secret:evtoken}":        "${secret:evtoken}",
		"Bearer ${GITHUB_TOKEN}":   "Bearer ${GITHUB_TOKEN}",
		"${A}:${B:-x}":             "${A}:${B:-x}",
		"ghp_0123456789abcdef":     Marker,
		"x":                        Marker,
		"Bearer ghp_0123456789abc": Marker,
		"ghp_0123456789abc${X}":    Marker,
		"$${literal}":              Marker,
		"${UNCLOSED":               Marker,
		"${HOME}/.config/mem.json": "${HOME}/.config/mem.json",
		"https://${HOST}/api/v1":   "https://${HOST}/api/v1",
		"${HOME}/ghp_0123456789ab": Marker,
	} {
		if got := Value(in); got != want {
			t.Errorf("Value(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/mcp":                          "https://example.com/mcp",
		"https://example.com/mcp?page=2&lang=en":           "https://example.com/mcp?page=2&lang=en",
		"https://u:pw@example.com/mcp":                     "https://u:" + Marker + "@example.com/mcp",
		"https://u:${secret:pw}@example.com/":              "https://u:${secret:pw}@example.com/",
		"https://h/mcp?token=abc&x=1#f":                    "https://h/mcp?token=" + Marker + "&x=1#f",
		"https://h/mcp?api_key=${secret:k}":                "https://h/mcp?api_key=${secret:k}",
		"${MCP_URL}":                                       "${MCP_URL}",
		"not a url":                                        "not a url",
		"http://127.0.0.1:8080/mcp?Authorization=Bearer+x": "http://127.0.0.1:8080/mcp?Authorization=" + Marker,
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "API_KEY": true, "apiKey": true, "Authorization": true, "X-Auth-Token": true,
		"password": true, "OPENAI_KEY": true, "session_id": true, "PATH": false, "HOME": false, "lang": false,
		"monkey": true, // erring on the side of hiding
		"oauth":  false, "clientId": false, "author": false, "GH_AUTH": true,
	} {
		if got := SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// Refs passes literal runs and reference bodies in order, "$${" as the literal "${", and
// stops at a "${" that is not closed.
func TestRefs(t *testing.T) {
	for _, c := range []struct {
		in, want, rest string
		ok             bool
	}{
		{"", "", "", true},
		{"plain", "[plain]", "", true},
		{"${A}", "{A}", "", true},
		{"Bearer ${GH_TOKEN}!", "[Bearer ]{GH_TOKEN}[!]", "", true},
		{"${A}${secret:b}", "{A}{secret:b}", "", true},
		{"$${A}", "[${][A}]", "", true},
		{"$$${A}", "[$][${][A}]", "", true},
		{"a${B:-x}c${", "[a]{B:-x}[c]", "${", false},
		{"${a${b}", "{a${b}", "", true},
		{"x ${UNCLOSED", "[x ]", "${UNCLOSED", false},
	} {
		var b strings.Builder
		rest, ok := Refs(c.in, func(text string, ref bool) {
			if ref {
				b.WriteString("{" + text + "}")
			} else {
				b.WriteString("[" + text + "]")
			}
		})
		if b.String() != c.want || rest != c.rest || ok != c.ok {
			t.Errorf("Refs(%q): pieces %s, rest %q, ok %v; want %s, %q, %v", c.in, b.String(), rest, ok, c.want, c.rest, c.ok)
		}
	}
}
