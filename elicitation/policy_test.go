package elicitation_test

import (
	"strings"
	"testing"

	"github.com/cordisgo/harness/elicitation"
)

// The flag wins over the environment, which wins over the profile; none is ask; a bad name
// says where it was given.
func TestResolvePolicy(t *testing.T) {
	for _, c := range []struct {
		flag, env, profile string
		want               elicitation.Policy
	}{
		{"decline", "defaults", "ask", elicitation.PolicyDecline},
		{"", "defaults", "decline", elicitation.PolicyDefaults},
		{"", "", "decline", elicitation.PolicyDecline},
		{"", "", "", elicitation.PolicyAsk},
	} {
		if got, err := elicitation.ResolvePolicy(c.flag, c.env, c.profile); got != c.want || err != nil {
			t.Errorf("ResolvePolicy(%q, %q, %q) = %q, %v; want %q", c.flag, c.env, c.profile, got, err, c.want)
		}
	}
	if _, err := elicitation.ResolvePolicy("", "sometimes", "ask"); err == nil || !strings.HasPrefix(err.Error(), "$"+elicitation.PolicyEnv+": ") {
		t.Errorf("a bad $%s: %v", elicitation.PolicyEnv, err)
	}
}
