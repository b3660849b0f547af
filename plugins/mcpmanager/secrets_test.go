package mcpmanager

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cordisgo/harness/ctx/ctxtest"
	"github.com/cordisgo/harness/secrets"
	"github.com/cordisgo/harness/testkit/mcptest"
)

// Secrets resolved from ${secret:…} and ${VAR} reach the server and nothing else: no view,
// event, log line, error or probe result carries them, even when the server echoes them
// on stderr or in an error body.
func TestSecretsNeverLeak(t *testing.T) {
	const (
		fileSecret = "FILESECRET-7f3a9c2e1b"
		envSecret  = "ENVSECRET-0d4e8a6b2c"
	)
	t.Setenv("MCPM_PASS", envSecret)

	var mu sync.Mutex
	var gotAuth, gotQuery []string
	sdk := mcptest.Handler(mcptest.NewServer("http"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		gotQuery = append(gotQuery, r.URL.Query().Get("key"))
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/deny") {
			// A server that echoes the credentials it refuses.
			http.Error(w, "refused token "+r.Header.Get("Authorization")+" key "+r.URL.Query().Get("key"), http.StatusForbidden)
			return
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the host: its clients hold streams open

	settings := "servers:\n" +
		stdioEntryEnv(t, "leaky", "leaky", map[string]string{mcptest.TokenEnv: "${secret:tok}"}, "args: [\"--password=${MCPM_PASS}\"]") +
		fmt.Sprintf("  web:\n    transport: streamable-http\n    url: \"%s/mcp?key=${MCPM_PASS}\"\n    headers: {Authorization: \"Bearer ${secret:tok}\"}\n", srv.URL) +
		fmt.Sprintf("  denied:\n    transport: streamable-http\n    url: \"%s/deny?key=${MCPM_PASS}\"\n    headers: {Authorization: \"Bearer ${secret:tok}\"}\n    reconnect: {enabled: false}\n", srv.URL) +
		stdioEntry(t, "unset", "normal", "args: [\"${MCPM_UNSET_VARIABLE}\"]")
	h := newHost(t, hostOptions{settings: &settings, creds: map[string]string{"tok": fileSecret}})

	snap := h.waitSnap("every server settled", func(s Snapshot) bool {
		l, _ := find(s, "leaky")
		w, _ := find(s, "web")
		d, _ := find(s, "denied")
		u, _ := find(s, "unset")
		return l.Status == StateConnected && strings.Contains(l.StderrTail, "token is") &&
			w.Status == StateConnected && d.Status == StateFailed && u.Status == StateFailed
	})
	// The values did reach the servers.
	mu.Lock()
	if !slices.Contains(gotAuth, "Bearer "+fileSecret) || !slices.Contains(gotQuery, envSecret) {
		t.Fatalf("the HTTP server did not get the resolved header and URL: %q %q", gotAuth, gotQuery)
	}
	mu.Unlock()
	if got := h.whoami("leaky"); !strings.HasPrefix(got, "leaky ") {
		t.Fatalf("leaky: %q", got)
	}
	// A missing variable fails only its server, and says which variable.
	if u, _ := find(snap, "unset"); !strings.Contains(u.Error, "${MCPM_UNSET_VARIABLE}") || !strings.Contains(u.Error, "args[0]") {
		t.Fatalf("unset: %s", dump(u))
	}
	if l, _ := find(snap, "leaky"); !strings.Contains(l.StderrTail, "token is [redacted]") {
		t.Fatalf("stderr tail: %q", l.StderrTail)
	}

	var outputs []string
	outputs = append(outputs, dump(snap), dump(h.m.List()), dump(h.events.Events()))
	for _, name := range []string{"leaky", "web", "denied", "unset"} {
		res, err := h.m.Probe(ctxtest.Wait(t), name, ProbeOptions{})
		outputs = append(outputs, dump(res), fmt.Sprint(err))
	}
	if err := h.m.Restart(ctxtest.Wait(t), "denied"); err != nil {
		outputs = append(outputs, err.Error())
	}
	h.waitStatus(StateFailed, "denied")
	outputs = append(outputs, dump(h.m.Snapshot()))
	// Secrets in a registration's error paths too.
	cfg := stdioConfig(t, "normal")
	cfg.Env[mcptest.TokenEnv] = "${secret:tok}"
	cfg.Args = []string{"${MCPM_PASS}", "${MCPM_UNSET_TOO}"}
	if _, err := h.m.Register(h.root, "reg", cfg); err != nil {
		outputs = append(outputs, err.Error())
	}
	h.waitStatus(StateFailed, "reg")
	outputs = append(outputs, dump(h.m.Snapshot()))

	_ = h.scope.Dispose(ctxtest.Wait(t))
	outputs = append(outputs, h.log.String(), dump(h.events.Events()))
	for i, out := range outputs {
		for _, secret := range []string{fileSecret, envSecret} {
			if strings.Contains(out, secret) {
				t.Fatalf("output %d carries a secret:\n%s", i, out)
			}
		}
	}
	if !strings.Contains(h.log.String(), "MCPM_UNSET_VARIABLE") {
		t.Fatal("the unresolved variable was not logged")
	}
}

// An entry that needs secrets fails clearly, alone, when no credentials provider exists;
// probing it is refused with code unavailable.
func TestMissingCredentialsProvider(t *testing.T) {
	t.Parallel()
	settings := "servers:\n" + stdioEntry(t, "ok", "normal", "") +
		stdioEntry(t, "needs", "normal", "args: [\"${secret:tok}\"]")
	h := newHost(t, hostOptions{settings: &settings}) // no credentials file
	snap := h.waitSnap("needs failed, ok connected", func(s Snapshot) bool {
		o, _ := find(s, "ok")
		n, _ := find(s, "needs")
		return o.Status == StateConnected && n.Status == StateFailed
	})
	if n, _ := find(snap, "needs"); !strings.Contains(n.Error, "no credentials provider") || !strings.Contains(n.Error, "does not exist") {
		t.Fatalf("needs: %s", dump(n))
	}
	_, err := h.m.Probe(ctxtest.Wait(t), "needs", ProbeOptions{})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("probe without a provider: %v", err)
	}
	// Providing the credentials service and restarting resolves it.
	if _, err := secrets.CredentialsKey.Provide(h.root, secrets.Credentials(credFunc(func(string) (string, error) { return "x", nil }))); err != nil {
		t.Fatal(err)
	}
	if err := h.m.Restart(ctxtest.Wait(t), "needs"); err != nil {
		t.Fatal(err)
	}
	h.waitStatus(StateConnected, "needs")
}

// A secret passed in args and echoed on stderr by a failing server stays out of the
// manager's views, events and log lines. (The client plugin's own log lines are another
// matter: its scrubber knows header values, secret-looking env values and URL credentials,
// not values the manager substituted into args; see the package report.)
func TestSecretEchoedByFailingServer(t *testing.T) {
	t.Parallel()
	const secret = "ARGSECRET-11223344556677"
	settings := "servers:\n" + stdioEntry(t, "x", "exit-with-args", `args: ["--token=${secret:tok}"]`)
	h := newHost(t, hostOptions{settings: &settings, creds: map[string]string{"tok": secret}})
	snap := h.waitStatus(StateFailed, "x")
	v, _ := find(snap, "x")
	if !strings.Contains(v.StderrTail, "--token=[redacted]") || !strings.Contains(v.Error, "[redacted]") {
		t.Fatalf("x: %s", dump(v))
	}
	outputs := []string{dump(snap), dump(h.events.Events())}
	for _, rec := range h.log.Records(slog.LevelDebug) {
		if scope := recordAttr(rec, "scope"); scope == "mcpmanager" {
			outputs = append(outputs, rec.Message+" "+fmt.Sprint(recordAttrs(rec)))
		}
	}
	for _, out := range outputs {
		if strings.Contains(out, secret) {
			t.Fatalf("the secret leaked: %s", out)
		}
	}
}

func recordAttrs(r slog.Record) map[string]string {
	out := map[string]string{}
	r.Attrs(func(a slog.Attr) bool {
		out[a.Key] = a.Value.String()
		return true
	})
	return out
}

func recordAttr(r slog.Record, key string) string { return recordAttrs(r)[key] }
