package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/cordisgo/harness/internal/loopback"
	"github.com/cordisgo/harness/plugins/remote/web"
)

// The sandbox of MCP Apps (docs/web.md, "Apps"): the page renders an app (a tool's ui://
// resource) in a frame of another origin — this second listener, on the same address with
// a port of its own — which loads the app's HTML into an inner frame under the
// Content-Security-Policy the resource's metadata asks for. The listener serves two files
// and no data, so it needs no token; it checks Host as the API does, and only the page may
// frame it.

// SandboxPath is the sandbox proxy's page on the sandbox listener; its query's csp
// parameter is the resource's ui.csp as JSON ([AppCSP]).
const SandboxPath = "/sandbox.html"

// AppCSP is the ui.csp of an MCP App's resource (SEP-1865): the origins the app may reach
// beyond its own document. Each entry is an origin such as https://api.example.com, with a
// wildcard subdomain allowed (https://*.example.com).
type AppCSP struct {
	ConnectDomains  []string `json:"connectDomains,omitempty"`
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	FrameDomains    []string `json:"frameDomains,omitempty"`
	BaseURIDomains  []string `json:"baseUriDomains,omitempty"`
}

// cspSource is what an AppCSP entry may be: a scheme, a host (a wildcard label first at
// most) and a port, nothing that could end a directive or add a keyword.
var cspSource = regexp.MustCompile(`^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?$`)

// ParseAppCSP decodes the csp parameter of the sandbox page ("" is no metadata: the
// restrictive default). An entry that is not an origin is refused with an error naming it:
// the host never widens a policy it cannot read.
func ParseAppCSP(s string) (AppCSP, error) {
	var c AppCSP
	if s == "" {
		return c, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return AppCSP{}, fmt.Errorf("csp: %w", err)
	}
	for key, list := range map[string][]string{"connectDomains": c.ConnectDomains, "resourceDomains": c.ResourceDomains,
		"frameDomains": c.FrameDomains, "baseUriDomains": c.BaseURIDomains} {
		for i, d := range list {
			if !cspSource.MatchString(d) {
				return AppCSP{}, fmt.Errorf("csp: %s[%d]: got %q: want an origin such as https://cdn.example.com or https://*.example.com", key, i, d)
			}
		}
	}
	return c, nil
}

// Policy is the Content-Security-Policy of an app's document, built as SEP-1865 says from
// the declared origins: nothing beyond its own inline code and data: images and media
// unless declared, connections to the connect domains only ('none' without them), nested
// frames from the frame domains only, no plugins, base URIs from the base-URI domains
// (else the document's own).
func (c AppCSP) Policy() string {
	list := func(first string, more []string, empty string) string {
		all := strings.TrimSpace(first + " " + strings.Join(more, " "))
		if all == "" {
			return empty
		}
		return all
	}
	r := c.ResourceDomains
	return strings.Join([]string{
		"default-src 'none'",
		"script-src " + list("'self' 'unsafe-inline'", r, ""),
		"style-src " + list("'self' 'unsafe-inline'", r, ""),
		"img-src " + list("'self' data:", r, ""),
		"font-src " + list("'self'", r, ""),
		"media-src " + list("'self' data:", r, ""),
		"connect-src " + list("", c.ConnectDomains, "'none'"),
		"frame-src " + list("", c.FrameDomains, "'none'"),
		"object-src 'none'",
		"base-uri " + list("", c.BaseURIDomains, "'self'"),
	}, "; ")
}

// sandbox serves the sandbox listener: SandboxPath (the proxy's document, made per
// request: its CSP from the query, the page's origin written into it) and sandbox.js.
type sandbox struct {
	guard    *loopback.Guard // Host only
	pagePort string          // the API listener's port: the page's origin is the request's host on it
}

func (s *sandbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Cache-Control", "no-store")
	if !s.guard.Host(r.Host) {
		http.Error(w, "the Host header must name the host's page", http.StatusForbidden)
		return
	}
	if !allow(w, r, http.MethodGet, http.MethodHead) {
		return
	}
	page := originOn(r.Host, s.pagePort)
	switch r.URL.Path {
	case SandboxPath:
		c, err := ParseAppCSP(r.URL.Query().Get("csp"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		hdr.Set("Content-Security-Policy", c.Policy()+"; frame-ancestors "+page)
		doc := `<!doctype html><html lang="en" data-host="` + html.EscapeString(page) + `"><head><meta charset="utf-8">` +
			`<title>MCP app sandbox</title><style>html,body{margin:0;height:100%;overflow:hidden;background:transparent}` +
			`iframe{display:block;border:0;width:100%;height:100%}</style>` +
			`<script src="/sandbox.js" defer></script></head><body></body></html>`
		http.ServeContent(w, r, "sandbox.html", time.Time{}, strings.NewReader(doc))
	case "/sandbox.js":
		b, err := fs.ReadFile(web.FS(), web.SandboxScript)
		if err != nil {
			http.Error(w, "sandbox file missing", http.StatusInternalServerError)
			return
		}
		hdr.Set("Content-Type", "text/javascript; charset=utf-8")
		hdr.Set("Cross-Origin-Resource-Policy", "same-origin")
		http.ServeContent(w, r, "sandbox.js", time.Time{}, bytes.NewReader(b))
	default:
		http.NotFound(w, r)
	}
}
