package agent

import (
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/permission"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConfigValidate(t *testing.T) {
	_, err := ctx.Decode[Config](map[string]any{"maxSteps": 0, "permissions": map[string]any{"default": "maybe", "deny": []any{"["}}})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"maxSteps", "permissions.default", `"allow", "ask" or "deny"`, "permissions.deny[0]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	cfg, err := ctx.Decode[Config](map[string]any{})
	if err != nil || cfg.MaxSteps != 50 || cfg.MaxParallel != 10 || cfg.LargeResultBytes != 51200 || cfg.Permissions.Default != permission.Ask {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
}

func TestPreview(t *testing.T) {
	text := strings.Repeat("é", 40_000) // 80,000 bytes, two per rune
	p := preview(text, 50<<10, "call_1", "/tmp/x/results/call_1.txt")
	if len(p) > 20_000 || !strings.Contains(p, "read_tool_result") || !strings.Contains(p, "/tmp/x/results/call_1.txt") {
		t.Fatalf("preview: %d bytes: %.200q", len(p), p)
	}
	if !strings.HasPrefix(p, "é") || !strings.HasSuffix(p, "é") {
		t.Error("cut inside a rune")
	}
}
