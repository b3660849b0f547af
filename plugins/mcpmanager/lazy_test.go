package mcpmanager

import (
	"slices"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"
)

// A lazy entry of the settings file: started once to fill the catalog, idle after its idle
// time with its tools kept; restarted, it is lazy (registered from the cache, no process);
// a call starts it.
func TestLazyEntry(t *testing.T) {
	settings := "servers:\n" + stdioEntry(t, "a", "normal", "startup: lazy\nidleTimeoutMs: 200")
	h := newHost(t, hostOptions{settings: &settings, catalog: true})
	h.waitStatus(StateIdle, "a")
	if !slices.Contains(h.tools(), "mcp__a__echo") {
		t.Fatalf("idle server's tools: %v", h.tools())
	}
	if err := h.m.Restart(ctxtest.Wait(t), "a"); err != nil {
		t.Fatal(err)
	}
	snap := h.waitStatus(StateLazy, "a")
	if v, _ := find(snap, "a"); !slices.Contains(v.Tools, "mcp__a__echo") {
		t.Errorf("lazy view %s", dump(v))
	}
	if got := h.whoami("a"); got == "" {
		t.Fatal("no answer")
	}
	h.waitStatus(StateConnected, "a")
	// Before the temporary directory goes: the client writes the cache when it unloads.
	if err := h.scope.Dispose(ctxtest.Wait(t)); err != nil {
		t.Fatal(err)
	}
}
