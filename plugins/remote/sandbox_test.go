package remote_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cordisgo/harness/plugins/remote"
)

// TestAppCSP: an app's policy is the one SEP-1865 builds from its ui.csp: the restrictive
// default without one, the declared origins in their directives with one; an entry that
// could widen the policy beyond an origin (a keyword, a second directive, a scheme alone)
// is refused, naming it.
func TestAppCSP(t *testing.T) {
	none, err := remote.ParseAppCSP("")
	if err != nil {
		t.Fatal(err)
	}
	want := "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
		"font-src 'self'; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'"
	if got := none.Policy(); got != want {
		t.Fatalf("default policy:\n got %s\nwant %s", got, want)
	}
	c, err := remote.ParseAppCSP(`{"connectDomains":["https://api.example.com","wss://live.example.com:8443"],` +
		`"resourceDomains":["https://*.cdn.example"],"frameDomains":["https://www.youtube.com"],"baseUriDomains":["https://base.example"]}`)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Policy()
	for _, d := range []string{"script-src 'self' 'unsafe-inline' https://*.cdn.example", "img-src 'self' data: https://*.cdn.example",
		"connect-src https://api.example.com wss://live.example.com:8443", "frame-src https://www.youtube.com",
		"base-uri https://base.example", "object-src 'none'"} {
		if !strings.Contains(got, d) {
			t.Fatalf("policy %q lacks %q", got, d)
		}
	}
	for _, bad := range []string{
		`{"connectDomains":["*"]}`,
		`{"connectDomains":["https://a.example; script-src *"]}`,
		`{"resourceDomains":["'unsafe-eval'"]}`,
		`{"resourceDomains":["https:"]}`,
		`{"frameDomains":["javascript://x"]}`,
		`{"connectDomains":["https://a.example/path"]}`,
		`{"connectDomain":["https://a.example"]}`,
		`[1]`,
	} {
		if _, err := remote.ParseAppCSP(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		} else if !strings.HasPrefix(err.Error(), "csp: ") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestSandbox: the apps' sandbox listener serves the proxy's document and script on its
// own port, without a token: the document under the policy its csp parameter asks for,
// framed by the page's origin only (the request's host on the API's port), the page's
// origin written into it; anything else, a foreign Host or a csp it cannot read is refused.
// The page may frame the sandbox's origin, and /v1/methods tells it where the sandbox is.
func TestSandbox(t *testing.T) {
	h := newHost(t, nil)
	sandbox := h.srv.SandboxURL()
	su, err := url.Parse(sandbox)
	if err != nil || su.Path != remote.SandboxPath || su.Host == strings.TrimPrefix(h.srv.URL(), "http://") {
		t.Fatalf("sandbox URL %q (API %s)", sandbox, h.srv.URL())
	}
	page := h.srv.URL()
	q := url.Values{"csp": {`{"connectDomains":["https://api.example.com"]}`}}
	resp, body := raw(t, http.MethodGet, sandbox+"?"+q.Encode(), "", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sandbox: %d %s", resp.StatusCode, body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "connect-src https://api.example.com") || !strings.HasSuffix(csp, "; frame-ancestors "+page) {
		t.Fatalf("sandbox CSP %q (page %s)", csp, page)
	}
	if !strings.Contains(body, `data-host="`+page+`"`) || !strings.Contains(body, `src="/sandbox.js"`) {
		t.Fatalf("sandbox document %q", body)
	}
	if resp, body := raw(t, http.MethodGet, "http://"+su.Host+"/sandbox.js", "", nil); resp.StatusCode != http.StatusOK ||
		!strings.Contains(body, "sandbox-resource-ready") || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("sandbox.js: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, c := range []struct {
		path   string
		header http.Header
		status int
	}{
		{"/sandbox.html?csp=" + url.QueryEscape(`{"connectDomains":["*"]}`), nil, http.StatusBadRequest},
		{"/app.js", nil, http.StatusNotFound},
		{"/v1/methods", nil, http.StatusNotFound},
		{"/sandbox.html", http.Header{"Host": {"evil.example:80"}}, http.StatusForbidden},
	} {
		req, err := http.NewRequest(http.MethodGet, "http://"+su.Host+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if hh := c.header.Get("Host"); hh != "" {
			req.Host = hh
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %v: %d, want %d", c.path, c.header, resp.StatusCode, c.status)
		}
	}
	if resp, _ := raw(t, http.MethodPost, sandbox, "", nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}

	// The page may frame the sandbox (and nothing else), and learns where it is.
	resp, _ = raw(t, http.MethodGet, page+"/", "", nil)
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-src http://"+su.Host+";") {
		t.Fatalf("page CSP %q, want frame-src http://%s", csp, su.Host)
	}
	resp, body = raw(t, http.MethodGet, page+"/v1/methods", "", h.auth())
	var listing struct {
		AppSandbox string `json:"appSandbox"`
	}
	if err := json.Unmarshal([]byte(body), &listing); err != nil || listing.AppSandbox != sandbox {
		t.Fatalf("methods: %d %s", resp.StatusCode, body)
	}
}
