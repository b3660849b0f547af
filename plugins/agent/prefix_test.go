package agent_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/plugins/agent"
)

// TestPrefixStability: in a session of ten turns, each calling a demo tool and answering,
// every request after the first repeats the previous request byte for byte as its prefix
// (the system prompt, the tool definitions and the history do not change under it), so at
// least 90 % of each request is a cache hit for DeepSeek's prefix cache (measured on the
// requests modeltest recorded).
func TestPrefixStability(t *testing.T) {
	e := newEnv(t, envOptions{model: modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
		last := c.Messages[len(c.Messages)-1]
		if last.Role == "user" {
			return modeltest.Reply{Reasoning: "Echo it.", ToolCalls: []modeltest.ToolCall{{Name: "mcp__demo__echo",
				Arguments: fmt.Sprintf(`{"text":%q}`, last.Content)}}}
		}
		return modeltest.Reply{Reasoning: "Answer.", Content: "It said: " + last.Content}
	}}})
	s := e.start(agent.StartOptions{})
	for i := range 10 {
		e.send(s, fmt.Sprintf("Echo message number %d, please.", i))
	}
	reqs := e.srv.Accepted()
	for i := 1; i < len(reqs); i++ {
		if n := modeltest.CommonPrefix(reqs[i-1].Prompt, reqs[i].Prompt); n != len(reqs[i-1].Prompt) {
			t.Errorf("request %d repeats %d of the %d bytes of request %d", i, n, len(reqs[i-1].Prompt), i-1)
		}
	}
	ratios := e.srv.PrefixRatios()
	if m := slices.Min(ratios); m < 0.9 {
		t.Errorf("lowest prefix ratio %.3f (all: %.3f)", m, ratios)
	}
	t.Logf("%d requests; prefix ratios from the second: min %.3f, last %.3f", len(reqs), slices.Min(ratios), ratios[len(ratios)-1])
}
