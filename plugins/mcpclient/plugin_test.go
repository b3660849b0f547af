package mcpclient

import (
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx"
)

func TestPluginToolsFromDemoServer(t *testing.T) {
	e := newEnv(t)
	ms := newMemServer(demo())
	s := e.mount(nil, memConfig("demo"), &hooks{dial: ms.dial})
	if s.State() != ctx.Active {
		t.Fatalf("state %v err %v", s.State(), s.Err())
	}
	want := []string{"mcp__demo__add", "mcp__demo__add_tool", "mcp__demo__big", "mcp__demo__echo", "mcp__demo__fail", "mcp__demo__image", "mcp__demo__slow"}
	if got := e.names(nil); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("tools %v", got)
	}
	res := e.mustCall(nil, "mcp__demo__echo", `{"text":"hi"}`)
	if res.Text() != "hi" {
		t.Fatalf("echo %q", res.Text())
	}
	e.st.waitPhase(t, "demo", PhaseConnected)
}
