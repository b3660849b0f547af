//go:build unix

package interop

import (
	"strings"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/mcpresources"
)

// TestEverythingSubscriptions subscribes to one of the reference server's documents twice
// (the resource service and the gateway's Upstream.Subscribe) over stdio: the server, which
// logs every subscribe and unsubscribe request it receives, sees one of each;
// toggle-subscriber-updates' update arrives as a ResourceUpdatedEvent.
func TestEverythingSubscriptions(t *testing.T) {
	srv := locate(t)
	cfg := newConfig(mcpclient.TransportStdio)
	cfg.Command = srv.node
	cfg.Args = []string{srv.entry, "stdio"}
	cfg.LogLevel = "debug"
	root := ctxtest.New(t)
	logs := ctxtest.Record(t, root, mcpclient.ServerLogEvent)
	updates := ctxtest.Record(t, root, mcpclient.ResourceUpdatedEvent)
	e := mountOn(t, root, cfg)
	resources, ok := mcpresources.Key.Get(root)
	if !ok {
		t.Fatal("no mcpResources service")
	}
	up, ok := mcpclient.LookupUpstream(root, serverName)
	if !ok {
		t.Fatal("no upstream")
	}
	const uri = "demo://resource/static/document/architecture.md"
	said := func(prefix string) func([]mcpclient.ServerLog) bool {
		return func(l []mcpclient.ServerLog) bool { return count(l, prefix) > 0 }
	}

	first, err := resources.Subscribe(ctxtest.Wait(t), root, serverName, uri)
	if err != nil {
		t.Fatal(err)
	}
	logs.WaitFor(t, said("Received Subscribe Resource request for URI: "+uri))
	second, err := up.Subscribe(ctxtest.Wait(t), uri)
	if err != nil {
		t.Fatal(err)
	}

	e.call(t, public("toggle-subscriber-updates"), `{}`) // sends one update at once, then every 5 s
	defer e.call(t, public("toggle-subscriber-updates"), `{}`)
	ev := updates.WaitFor(t, func(u []mcpclient.ResourceChange) bool { return len(u) > 0 })[0]
	if ev.Server != serverName || ev.URI != uri {
		t.Fatalf("update %+v", ev)
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	l := logs.WaitFor(t, said("Received Unsubscribe Resource request: "+uri))
	// The server logs each request before answering it, in order on one stream: by its
	// unsubscribe's message, a second subscribe's would have arrived.
	if n := count(l, "Received Subscribe Resource request"); n != 1 {
		t.Fatalf("the server received %d subscribe requests for two subscribers", n)
	}
}

// count returns how many messages start with prefix.
func count(l []mcpclient.ServerLog, prefix string) int {
	n := 0
	for _, m := range l {
		if strings.HasPrefix(m.Message, prefix) {
			n++
		}
	}
	return n
}
