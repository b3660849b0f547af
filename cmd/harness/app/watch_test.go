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

// watchServer serves a subscribable server over HTTP and sends one update of each URI
// subscribed, once the subscription is in place.
func watchServer(t *testing.T) (*mcptest.Subscribable, string) {
	t.Helper()
	sub := mcptest.NewSubscribable(true)
	h := mcptest.NewHTTP(t, func() *mcp.Server { return sub.Server })
	return sub, h.URL()
}

// TestResourcesWatch: `resources watch` subscribes, prints one JSON object per update with
// the new contents (--read), and unsubscribes when interrupted.
func TestResourcesWatch(t *testing.T) {
	t.Parallel()
	sub, url := watchServer(t)
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for range 2 {
			select {
			case uri := <-sub.Subscribed:
				sub.Update(t, uri)
			case <-cx.Done():
				return
			}
		}
	}()
	// Interrupt once both updates are printed.
	stdout := &watchWriter{want: []string{`"uri":"sub://a"`, `"uri":"sub://b"`}, seen: cancel}
	var stderr strings.Builder
	code := testOptions().Run(cx, []string{"--http", "web=" + url, "resources", "watch", "web", "sub://b", "sub://a", "--json", "--read"},
		strings.NewReader(""), stdout, &stderr, nil)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
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
	if !strings.Contains(stderr.String(), "watching 2 resource(s) of web") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

// TestResourcesWatchLines: for people, one line per update with the time, the server and
// the URI; a server that cannot subscribe is an error naming it.
func TestResourcesWatchLines(t *testing.T) {
	t.Parallel()
	sub, url := watchServer(t)
	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		select {
		case uri := <-sub.Subscribed:
			sub.Update(t, uri)
		case <-cx.Done():
		}
	}()
	stdout := &watchWriter{want: []string{"  web  sub://a\n"}, seen: cancel}
	var stderr strings.Builder
	code := testOptions().Run(cx, []string{"--http", "web=" + url, "resources", "watch", "web", "sub://a"},
		strings.NewReader(""), stdout, &stderr, nil)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr.String())
	}
	line := stdout.String()
	if _, err := time.Parse(time.RFC3339, strings.Fields(line)[0]); err != nil || strings.Count(line, "\n") != 1 {
		t.Fatalf("want one line starting with the time: %q (%v)", line, err)
	}

	r := run(t, nil, "resources", "watch", "demo", "demo://readme")
	// The demo server subscribes to demo://config.json only: a refusal is the command's failure.
	r.expect(t, ExitFailure, "", `only demo://config.json can be subscribed to`)
}
