package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cordisgo/harness/hostgateway"
)

// TestGatewayTokenKept: serve's token is made once (mode 0600), the same at every start
// (here: every --print-client-config) until --rotate-token; the client lines carry it.
func TestGatewayTokenKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"XDG_CONFIG_HOME=" + dir, "HOME=" + dir}
	first := run(t, env, "serve", "--print-client-config", "claude")
	first.expect(t, ExitOK, "claude mcp add --transport http harness http://127.0.0.1:8931/mcp --header 'Authorization: Bearer ", "")
	file := filepath.Join(dir, "harness", hostgateway.TokenFileName)
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", err, fi)
	}
	b, _ := os.ReadFile(file)
	tok := strings.TrimSpace(string(b))
	if len(tok) < 32 || !strings.Contains(first.stdout, tok) {
		t.Fatalf("token %q, printed:\n%s", tok, first.stdout)
	}
	run(t, env, "serve", "--print-client-config", "claude").expect(t, ExitOK, tok, "")
	all := run(t, env, "serve", "--addr", "127.0.0.1:9000", "--print-client-config", "all")
	for _, want := range []string{"# Codex", `http_headers = { Authorization = "Bearer ` + tok + `" }`,
		`"httpUrl":"http://127.0.0.1:9000/mcp"`, `"type":"http"`, "# Cursor", "# gemini-cli", "# Qwen Code: ~/.qwen/settings.json", "# VS Code"} {
		all.expect(t, ExitOK, want, "")
	}
	rotated := run(t, env, "serve", "--rotate-token", "--print-client-config", "cursor")
	if rotated.code != ExitOK || strings.Contains(rotated.stdout, tok) {
		t.Fatalf("rotate kept the token:\n%s%s", rotated.stdout, rotated.stderr)
	}
	run(t, env, "serve", "--print-client-config", "cusor").expect(t, ExitUsage, "", `did you mean "cursor"`)
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, env, "serve", "--print-client-config", "claude").expect(t, ExitUsage, "", "expected 0600")
}
