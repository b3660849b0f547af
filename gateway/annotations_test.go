package gateway

import (
	"testing"

	"github.com/cordisgo/harness/plugins/toolregistry"
)

// TestToolOfAnnotations: a tool's hints, as the MCP client keeps them, reach the gateway's
// clients as annotations; a tool without any has none.
func TestToolOfAnnotations(t *testing.T) {
	tool := toolOf(toolregistry.Info{Name: "mcp__ws__read", Parameters: []byte(`{"type":"object"}`),
		Meta: map[string]string{"server": "ws", "title": "Read", "readOnlyHint": "true", "idempotentHint": "true", "destructiveHint": "false", "openWorldHint": "false"}})
	a := tool.Annotations
	if a == nil || !a.ReadOnlyHint || !a.IdempotentHint || a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil || *a.OpenWorldHint || tool.Title != "Read" {
		t.Errorf("annotations %+v, title %q", a, tool.Title)
	}
	shell := toolOf(toolregistry.Info{Name: "mcp__ws__shell", Meta: map[string]string{"readOnlyHint": "false", "idempotentHint": "false", "destructiveHint": "true"}})
	if a := shell.Annotations; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint || a.OpenWorldHint != nil {
		t.Errorf("shell annotations %+v", a)
	}
	if plain := toolOf(toolregistry.Info{Name: "note", Meta: map[string]string{"server": "x"}}); plain.Annotations != nil {
		t.Errorf("a tool without hints got %+v", plain.Annotations)
	}
}
