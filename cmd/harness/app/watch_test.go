package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/testkit/mcptest"
)

// watch runs `resources watch web ARGS` against a subscribable server ("web", over HTTP)
// that sends one update of each of the first updates URIs subscribed, once the
// subscription is in place, until stdout holds every string of want; then it interrupts the
// command. It fails the test unless the command exits 0.
func watch(t *testing.T, updates int, want []string, args ...string) (sub *mcptest.Subscribable, stdout, stderr string) {
	t.Helper()
	sub = mcptest.NewSubscribable(true)
	h := mcptest.NewHTTP(t, func() *mcp.Server { return sub.Server })
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for range updates {
			select {
			case uri := <-sub.Subscribed:
				sub.Update(t, uri)
			case <-cx.Done():
				return
			}
		}
	}()
	out := &watchWriter{want: want, seen: cancel}
	var errs strings.Builder
	code := testOptions().Run(cx, append([]string{"--http", "web=" + h.URL(), "resources", "watch", "web"}, args...),
		strings.NewReader(""), out, &errs, nil)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs.String())
	}
	return sub, out.String(), errs.String()
}

// TestResourcesWatch: `resources watch` subscribes, prints one JSON object per update with
// the new contents (--read), and unsubscribes when interrupted.
func TestResourcesWatch(t *testing.T) {
	t.Parallel()
	// Interrupted once both updates are printed.
	sub, stdout, stderr := watch(t, 2, []string{`"uri":"sub://a"`, `"uri":"sub://b"`}, "sub://b", "sub://a", "--json", "--read")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per update:\n%s", stdout)
	}
	for _, l := range lines {
		var u struct {
			Time     time.Time `json:"time"`
			Server   string    `json:"server"`
			URI      string    `json:"uri"`
			Contents []struct {
				Text string `json:"text"`
			} `json:"contents"`
		}
		if err := json.Unmarshal([]byte(l), &u); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if u.Server != "web" || u.Time.IsZero() || len(u.Contents) != 1 || u.Contents[0].Text != "contents of "+u.URI {
			t.Fatalf("update %s", l)
		}
	}
	// Both subscriptions were released on the way out.
	got := map[string]bool{<-sub.Unsubscribed: true, <-sub.Unsubscribed: true}
	if !got["sub://a"] || !got["sub://b"] {
		t.Fatalf("unsubscribed %v", got)
	}
	if !strings.Contains(stderr, "watching 2 resource(s) of web") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestResourcesWatchLines: for people, one line per update with the time, the server and
// the URI; a server that cannot subscribe is an error naming it.
func TestResourcesWatchLines(t *testing.T) {
	t.Parallel()
	_, line, _ := watch(t, 1, []string{"  web  sub://a\n"}, "sub://a")
	if _, err := time.Parse(time.RFC3339, strings.Fields(line)[0]); err != nil || strings.Count(line, "\n") != 1 {
		t.Fatalf("want one line starting with the time: %q (%v)", line, err)
	}

	r := run(t, nil, "resources", "watch", "demo", "demo://readme")
	// The demo server subscribes to demo://config.json only: a refusal is the command's failure.
	r.expect(t, ExitFailure, "", `only demo://config.json can be subscribed to`)
}
