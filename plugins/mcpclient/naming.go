package mcpclient

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxToolNameLen is the longest public tool name model APIs accept.
const maxToolNameLen = 64

// toolHashLen is the number of hex digits of the identity hash appended to
// a public name that had to be changed or cut.
const toolHashLen = 12

// PublicToolName returns the model-facing name of the raw MCP tool raw on
// the server configured as server (dsh-mcp-spec §4):
//
//  1. joined = "mcp__" + server + "__" + raw;
//  2. every rune of joined outside [A-Za-z0-9_-] is replaced by one "_"
//     (runes, not bytes or UTF-16 units: "é" and "😀" each become a single
//     "_"; invalid UTF-8 bytes become one "_" each);
//  3. if nothing was replaced and len(joined) ≤ 64, joined is the name;
//  4. otherwise the name is the first 51 characters of the normalised
//     string + "_" + the first 12 lowercase hex digits of
//     SHA-256(server + "\x00" + raw), so at most 64 characters.
//
// The name is a pure function of (server, raw): it never changes across
// reconnects. Raw names that normalise alike ("admin.reset" and
// "admin_reset") still get distinct names, because only the clean one is
// used verbatim and the others carry a hash of their exact identity; a
// collision needs a 48-bit hash collision or a raw name that spells out
// another tool's hashed name, so callers still check for duplicates. The
// name is never sent to the server nor parsed back; keep the raw name
// alongside it.
//
// The unit differs from the JavaScript reference harness (UTF-16 code units)
// only for characters outside the Basic Multilingual Plane, which become
// one "_" here and two there; such names are hashed either way.
func PublicToolName(server, raw string) string {
	joined := "mcp__" + server + "__" + raw
	var b strings.Builder
	b.Grow(len(joined))
	changed := false
	for _, r := range joined {
		if isToolNameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
			changed = true
		}
	}
	normalized := b.String() // ASCII only: byte and rune indices agree
	if !changed && len(normalized) <= maxToolNameLen {
		return normalized
	}
	sum := sha256.Sum256([]byte(server + "\x00" + raw))
	hash := hex.EncodeToString(sum[:])[:toolHashLen]
	keep := min(len(normalized), maxToolNameLen-toolHashLen-1)
	return normalized[:keep] + "_" + hash
}

// isToolNameRune reports whether r is in [A-Za-z0-9_-].
func isToolNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// ownerPrefix starts the name of what a client registers for its server: its tool set's
// owner and its system-prompt section ("mcp:<server>").
const ownerPrefix = "mcp:"

// Owner returns the name the client of server registers under: the owner of its tools in
// the tools service (toolregistry.Change.Owner) and the name of its instructions' prompt
// section. [ServerOf] reads it back.
func Owner(server string) string { return ownerPrefix + server }

// ServerOf returns the server whose client registered under owner (see [Owner]), and false
// when owner is not an MCP client's.
func ServerOf(owner string) (string, bool) {
	server, ok := strings.CutPrefix(owner, ownerPrefix)
	return server, ok && server != ""
}
