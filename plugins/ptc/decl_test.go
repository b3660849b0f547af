package ptc_test

import (
	"encoding/json"
	"testing"

	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

func TestDeclarationsPrint(t *testing.T) {
	d := ptc.Declarations([]toolregistry.Info{
		{Name: "mcp__gh__create_issue", Description: "Creates an issue.\nUse */ carefully.", Meta: map[string]string{"server": "gh"},
			Parameters:   json.RawMessage(`{"type":"object","properties":{"title":{"type":"string","minLength":1,"description":"The title"},"labels":{"type":"array","items":{"type":"string","enum":["bug","feature"]}},"due":{"type":["string","null"],"format":"date-time"},"meta":{"type":"object","additionalProperties":{"type":"number"}},"kind":{"const":"x"},"node":{"$ref":"#/$defs/node"},"weird-key":{"anyOf":[{"type":"integer","minimum":0},{"type":"boolean"}]}},"required":["title"],"$defs":{"node":{"type":"object","properties":{"child":{"$ref":"#/$defs/node"},"v":{"type":"integer"}}}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"number":{"type":"integer"}},"required":["number"]}`)},
		{Name: "local", Description: "A plugin tool."},
	})
	t.Log(d)
}
