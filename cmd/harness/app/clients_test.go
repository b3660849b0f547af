package app

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/host"
	"github.com/cordisgo/harness/plugins/mcpmanager"
	"github.com/cordisgo/harness/plugins/remote"
)

// TestManagementPageHost: run prints the page's URL (with the token in the fragment only);
// open --print gives the same URL from the endpoint file; harness/clients streams the
// profile's own demo row, which the manager does not list, with its status.
func TestManagementPageHost(t *testing.T) {
	t.Parallel()
	f := newHostFixture(t)
	h := startHost(t, f.env, f.profile)
	cl, err := remote.Discover(f.endpoint)
	if err != nil {
		t.Fatal(err)
	}
	want := cl.BaseURL + "/#token=" + cl.Token
	if !strings.Contains(h.String(), "management page: "+want+"\n") {
		t.Fatalf("run did not print the page URL:\n%s", h.String())
	}
	if n := strings.Count(h.String(), cl.Token); n != 1 {
		t.Fatalf("the token appears %d times on stderr, want once (in the page URL)", n)
	}
	run(t, f.env, "open", "--print").expect(t, ExitOK, want+"\n", "")

	cx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var last []mcpmanager.View
	errSeen := errors.New("seen")
	err = cl.Stream(cx, host.MethodClients.Name(), nil, func(raw json.RawMessage) error {
		if err := json.Unmarshal(raw, &last); err != nil {
			return err
		}
		for _, v := range last {
			if v.Name == "managed" {
				t.Fatalf("harness/clients lists the manager's server: %+v", v)
			}
			if v.Name == "demo" && v.Status == "connected" && len(v.Tools) > 0 && v.Source == "profile" && v.ServerInfo != nil {
				return errSeen
			}
		}
		return nil
	})
	if !errors.Is(err, errSeen) {
		t.Fatalf("harness/clients: %v; last %+v", err, last)
	}
}
