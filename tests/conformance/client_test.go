//go:build unix

package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// clientScenarios are the suite's client scenarios (`conformance list`, version 0.1.16).
var clientScenarios = []string{
	"initialize",
	"tools_call",
	"elicitation-sep1034-client-defaults",
	"sse-retry",
	"auth/metadata-default",
	"auth/metadata-var1",
	"auth/metadata-var2",
	"auth/metadata-var3",
	"auth/basic-cimd",
	"auth/scope-from-www-authenticate",
	"auth/scope-from-scopes-supported",
	"auth/scope-omitted-when-undefined",
	"auth/scope-step-up",
	"auth/scope-retry-limit",
	"auth/token-endpoint-auth-basic",
	"auth/token-endpoint-auth-post",
	"auth/token-endpoint-auth-none",
	"auth/pre-registration",
	"auth/2025-03-26-oauth-metadata-backcompat",
	"auth/2025-03-26-oauth-endpoint-fallback",
	"auth/resource-mismatch",
	"auth/offline-access-scope",
	"auth/offline-access-not-supported",
	"auth/client-credentials-jwt",
	"auth/client-credentials-basic",
	"auth/cross-app-access-complete-flow",
}

// TestClientScenarios runs every client scenario of the suite with the harness's MCP client
// (this test binary re-executed, see clientMain) and reports each scenario's checks.
func TestClientScenarios(t *testing.T) {
	s := locate(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	passed := 0
	for _, name := range clientScenarios {
		ok := t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.CommandContext(t.Context(), s.node, s.entry, "client", "--command", self, "--scenario", name, "--timeout", "30000", "-o", out)
			cmd.Env = append(os.Environ(), clientEnv+"=1")
			cmd.Dir = t.TempDir()
			res, runErr := cmd.CombinedOutput()
			checks := readChecks(t, out)
			for dir, cs := range checks {
				p, f, w := tally(cs)
				t.Logf("%s: %d passed, %d failed, %d warnings", dir, p, f, w)
				for _, c := range cs {
					if c.Status == "FAILURE" || c.Status == "WARNING" {
						t.Logf("  %s %s: %s %s", c.Status, c.ID, c.Description, c.ErrorMessage)
					}
				}
				if stderr, err := os.ReadFile(filepath.Join(out, dir, "stderr.txt")); err == nil && runErr != nil {
					t.Logf("client stderr:\n%s", tail(string(stderr), 3000))
				}
			}
			if runErr != nil || !strings.Contains(string(res), "OVERALL: PASSED") {
				t.Errorf("scenario %s failed (%v):\n%s", name, runErr, tail(string(res), 2000))
			}
		})
		if ok {
			passed++
		}
	}
	t.Logf("client conformance: %d/%d scenarios passed", passed, len(clientScenarios))
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
