package mcpclient

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cordisgo/harness/internal/demoserver"
	"github.com/cordisgo/harness/plugins/mcpclient/catalog"
)

// The catalog entry follows the server: the first discovery writes its tools, resources,
// templates and instructions; a tools/list_changed re-listing rewrites it with the new tool,
// and a reconnect to a server with other instructions rewrites it again.
func TestCatalogRefresh(t *testing.T) { synctest.Test(t, testCatalogRefresh) }

func testCatalogRefresh(t *testing.T) {
	e, _, store := newCatalogEnv(t)
	first := newMemServer(demo())
	sw := &swappableServer{cur: first}
	cfg := memConfig("srv")
	e.mount(nil, cfg, &hooks{dial: sw.dial, jitter: noJitter})
	e.st.waitPhase(t, "srv", PhaseConnected)
	synctest.Wait() // the catalog writer has written the entry
	hash, err := configHash(cfg)
	must(t, err)
	load := func() *catalog.Server {
		t.Helper()
		entry, err := store.Load("srv", hash)
		if err != nil {
			t.Fatal(err)
		}
		return entry
	}
	tools := func(entry *catalog.Server) []string {
		var out []string
		for _, tl := range entry.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	entry := load()
	if got := tools(entry); !slices.Contains(got, "echo") || slices.Contains(got, "extra_zebra") {
		t.Fatalf("first entry's tools %v", got)
	}
	// the resources and templates are listed too (the demo server has no prompts)
	if len(entry.Resources) == 0 || len(entry.ResourceTemplates) == 0 || entry.Instructions != demoserver.DefaultInstructions {
		t.Fatalf("first entry: %d resources, %d templates, instructions %q", len(entry.Resources), len(entry.ResourceTemplates), entry.Instructions)
	}

	// add_tool registers extra_zebra: tools/list_changed, a re-listing, the entry rewritten
	e.mustCall(nil, "mcp__srv__add_tool", `{"name":"zebra"}`)
	time.Sleep(refreshMaxDelay) // the refresher's quiet period, on the bubble's clock
	synctest.Wait()
	if got := tools(load()); !slices.Contains(got, "extra_zebra") {
		t.Fatalf("after tools/list_changed the entry's tools are %v", got)
	}

	// a reconnect discovers again and rewrites the entry
	sw.swap(newMemServer(instructed("Version two.")))
	first.crash()
	e.st.waitPhase(t, "srv", PhaseReconnecting)
	e.st.waitPhase(t, "srv", PhaseConnected)
	synctest.Wait()
	if entry := load(); entry.Instructions != "Version two." || slices.Contains(tools(entry), "extra_zebra") {
		t.Fatalf("after the reconnect: instructions %q, tools %v", entry.Instructions, tools(entry))
	}
}
