package app

import (
	"strings"
	"testing"

	"github.com/cordisgo/harness/elicitation"
	"github.com/cordisgo/harness/profiles"
)

// TestElicitationPolicy: without a terminal the default (ask) offers servers elicitation
// (they list the same tools as on a terminal) and declines the demo's question, saying so
// in one line on stderr with the fix; defaults — from the flag, the environment or the
// profile's key — answers with the form's defaults; the flag wins over the environment,
// which wins over the profile; an unknown policy is a usage error.
func TestElicitationPolicy(t *testing.T) {
	t.Parallel()
	const defaultsAnswer = "accept: age=36, color=green, name=Ada, subscribe=false\n"
	ask := []string{"tools", "call", "mcp__demo__ask", "{}"}
	r := run(t, nil, ask...)
	r.expect(t, ExitOK, "decline\n", "harness: mcp server demo asked a question, and there is no terminal to answer it on: declined; "+
		"run on a terminal, or answer with the form's defaults (--elicitation defaults)\n")
	if r.stdout != "decline\n" || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("want the tool's answer on stdout and one line on stderr:\n%s---\n%s", r.stdout, r.stderr)
	}

	run(t, nil, append([]string{"--elicitation", "defaults"}, ask...)...).expect(t, ExitOK, defaultsAnswer, "")
	run(t, []string{elicitation.PolicyEnv + "=defaults"}, ask...).expect(t, ExitOK, defaultsAnswer, "")
	run(t, nil, append([]string{"--set", "elicitation=defaults"}, ask...)...).expect(t, ExitOK, defaultsAnswer, "")
	run(t, []string{elicitation.PolicyEnv + "=decline"}, append([]string{"--set", "elicitation=defaults"}, ask...)...).
		expect(t, ExitFailure, "", "does not support elicitation")
	run(t, []string{elicitation.PolicyEnv + "=defaults"}, append([]string{"--elicitation", "decline"}, ask...)...).
		expect(t, ExitFailure, "", "does not support elicitation")

	run(t, nil, "--elicitation", "never", "profile", "show").
		expect(t, ExitUsage, "", `--elicitation: elicitation policy "never": want "decline", "defaults" or "ask"`)
	run(t, []string{elicitation.PolicyEnv + "=sometimes"}, ask...).expect(t, ExitUsage, "", "$HARNESS_ELICITATION: elicitation policy \"sometimes\"")
	run(t, nil, "--set", "elicitation=never", "profile", "show").expect(t, ExitUsage, "", `key "elicitation": unknown policy "never"`)
	run(t, nil, "--set", "elicitation=defaults", "profile", "show").expect(t, ExitOK, "\nelicitation: defaults\n", "")
}

// TestElicitationPolicyNames: the profile's key accepts exactly the service's policies.
func TestElicitationPolicyNames(t *testing.T) {
	t.Parallel()
	for _, name := range profiles.ElicitationPolicies {
		if _, err := elicitation.ParsePolicy(name); err != nil {
			t.Errorf("profiles accepts %q: %v", name, err)
		}
	}
	for _, p := range []elicitation.Policy{elicitation.PolicyDecline, elicitation.PolicyDefaults, elicitation.PolicyAsk} {
		found := false
		for _, name := range profiles.ElicitationPolicies {
			found = found || name == string(p)
		}
		if !found {
			t.Errorf("profiles does not accept the policy %q", p)
		}
	}
}
