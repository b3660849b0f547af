package hostview

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Canonical is the machine-readable form of a result: the tool's own
// protocol JSON when it kept one (an MCP CallToolResult), else the
// registry's result.
func Canonical(res *toolregistry.Result) any {
	if res != nil && len(res.Raw) > 0 {
		return res.Raw
	}
	return res
}

// CanonicalCall is the --json form of a call's outcome: Canonical(res),
// and when the registry itself refused or failed the call (the result has
// no protocol JSON of the tool's own), the registry's error under "error"
// with its code, such as {"code": "invalid_arguments", ...}.
func CanonicalCall(res *toolregistry.Result, terr error) any {
	var te *toolregistry.ToolError
	if res == nil || len(res.Raw) > 0 || !errors.As(terr, &te) {
		return Canonical(res)
	}
	b, err := json.Marshal(res)
	if err != nil {
		return Canonical(res)
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return Canonical(res)
	}
	m["error"] = te
	return m
}

// Summary returns the first line of s, cut to at most n runes.
func Summary(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// ViewMark starts the description of a tool with an interactive view in a list, and
// ViewNote says under the list what it means and how to open one.
const (
	ViewMark = "[view] "
	ViewNote = "[view]: the tool has an interactive view (an MCP App): the management page shows it (harness open) under a call from its card, and under a chat's call in the Chat view"
)

// HasView reports whether the tool has an interactive view: its server names a ui://
// resource for it (_meta.ui, an MCP App), which the management page renders.
func HasView(in toolregistry.Info) bool { return in.Meta[mcpclient.MetaUIResource] != "" }
