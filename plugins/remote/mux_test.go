package remote_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/cordisgo/harness/plugins/remote"
)

// muxEvent is one event of a mux stream.
type muxEvent struct {
	event string
	sub   string
	value string
	err   string
}

// openMux opens GET /v1/mux and returns its id and a channel of its events (closed when the
// stream ends).
func openMux(t *testing.T, h *host) (string, <-chan muxEvent, func()) {
	t.Helper()
	cx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(cx, http.MethodGet, h.srv.URL()+"/v1/mux", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.auth()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/mux: %d", resp.StatusCode)
	}
	events := make(chan muxEvent, 64)
	sc := bufio.NewScanner(resp.Body)
	next := func() (muxEvent, bool) {
		var ev muxEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				return ev, true
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				var d struct {
					ID    string          `json:"id"`
					Sub   string          `json:"sub"`
					Value json.RawMessage `json:"value"`
					Error *remote.Error   `json:"error"`
				}
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d); err != nil {
					t.Errorf("mux data %q: %v", line, err)
				}
				ev.sub, ev.value = d.Sub, string(d.Value)
				if d.ID != "" {
					ev.value = d.ID
				}
				if d.Error != nil {
					ev.err = string(d.Error.Code) + ": " + d.Error.Message
				}
			}
		}
		return ev, false
	}
	hello, ok := next()
	if !ok || hello.event != "mux" || hello.value == "" {
		t.Fatalf("first mux event %+v", hello)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(events)
		defer resp.Body.Close()
		for {
			ev, ok := next()
			if !ok {
				return
			}
			events <- ev
		}
	}()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return hello.value, events, stop
}

func muxPost(t *testing.T, h *host, id, op, body string) (*http.Response, string) {
	t.Helper()
	return raw(t, http.MethodPost, h.srv.URL()+"/v1/mux/"+id+"/"+op, body, h.auth())
}

func TestMux(t *testing.T) {
	h := newHost(t, nil)
	id, events, stop := openMux(t, h)

	// Two streams on one connection: values tagged with their sub, each stream's end.
	for _, body := range []string{`{"sub":"a","method":"svc/count","params":2}`, `{"sub":"b","method":"svc/failing"}`} {
		if resp, b := muxPost(t, h, id, "open", body); resp.StatusCode != http.StatusOK {
			t.Fatalf("open %s: %d %s", body, resp.StatusCode, b)
		}
	}
	got := map[string][]string{}
	for ended := 0; ended < 2; {
		ev := <-events
		switch ev.event {
		case "end":
			got[ev.sub] = append(got[ev.sub], "end")
			ended++
		case "error":
			got[ev.sub] = append(got[ev.sub], "error "+ev.err)
			ended++
		default:
			got[ev.sub] = append(got[ev.sub], ev.value)
		}
	}
	if a := strings.Join(got["a"], ","); a != "0,1,end" {
		t.Errorf("sub a: %s", a)
	}
	if b := strings.Join(got["b"], ","); b != `"first",error unavailable: upstream went away` {
		t.Errorf("sub b: %s", b)
	}

	// Refusals: an unknown method, a call method, a duplicate sub, an unknown mux.
	resp, body := muxPost(t, h, id, "open", `{"sub":"c","method":"svc/nope"}`)
	wantError(t, resp, body, http.StatusNotFound, remote.CodeNotFound)
	resp, body = muxPost(t, h, id, "open", `{"sub":"c","method":"svc/echo"}`)
	wantError(t, resp, body, http.StatusNotFound, remote.CodeNotFound)
	resp, body = muxPost(t, h, "0123", "open", `{"sub":"c","method":"svc/count","params":1}`)
	wantError(t, resp, body, http.StatusNotFound, remote.CodeNotFound)
	resp, body = muxPost(t, h, id, "open", `{"method":"svc/count"}`)
	wantError(t, resp, body, http.StatusBadRequest, remote.CodeBadRequest)

	// close ends one stream: its method's context is cancelled, an end event follows.
	if resp, b := muxPost(t, h, id, "open", `{"sub":"h","method":"svc/hang"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("open hang: %d %s", resp.StatusCode, b)
	}
	if ev := <-events; ev.sub != "h" || ev.value != `"ready"` {
		t.Fatalf("hang's first value: %+v", ev)
	}
	resp, body = muxPost(t, h, id, "open", `{"sub":"h","method":"svc/count","params":1}`)
	wantError(t, resp, body, http.StatusBadRequest, remote.CodeBadRequest)
	if resp, b := muxPost(t, h, id, "close", `{"sub":"h"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("close: %d %s", resp.StatusCode, b)
	}
	if err := <-h.svc.cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("hang's context ended with %v", err)
	}
	if ev := <-events; ev.sub != "h" || ev.event != "end" {
		t.Fatalf("after close: %+v", ev)
	}

	// The client going away cancels what still runs, and the mux id is gone.
	if resp, b := muxPost(t, h, id, "open", `{"sub":"h2","method":"svc/hang"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("open hang: %d %s", resp.StatusCode, b)
	}
	<-events
	stop()
	if err := <-h.svc.cancelled; err == nil {
		t.Fatal("hang's context did not end with the mux")
	}
	resp, body = muxPost(t, h, id, "open", `{"sub":"x","method":"svc/count","params":1}`)
	wantError(t, resp, body, http.StatusNotFound, remote.CodeNotFound)
	h.noSecretInLog(t)
}
