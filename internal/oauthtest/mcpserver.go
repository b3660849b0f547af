package oauthtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Introspector is the static client the MCP server authenticates with at the provider's
// introspection endpoint. Add IntrospectorClient() to the provider's clients.
const (
	IntrospectorID     = "mcp-resource-server"
	IntrospectorSecret = "introspector-secret-for-tests"
)

// IntrospectorClient is the provider client of the MCP server itself.
func IntrospectorClient() Client {
	return Client{"client_id": IntrospectorID, "client_secret": IntrospectorSecret,
		"grant_types": []string{}, "response_types": []string{}, "redirect_uris": []string{},
		"token_endpoint_auth_method": "client_secret_basic"}
}

// Server is a go-sdk MCP server over Streamable HTTP behind auth.RequireBearerToken: it
// serves its protected-resource metadata (RFC 9728) with ProtectedResourceMetadataHandler
// and verifies every bearer token by introspection at the provider, checking that the
// token's audience is this server (RFC 8707). It is safe for concurrent use.
type Server struct {
	// URL is the MCP endpoint (…/mcp); MetadataURL the protected-resource metadata.
	URL, MetadataURL string

	httpSrv  *httptest.Server
	provider *Provider
	required atomic.Pointer[[]string]

	mu      sync.Mutex
	seen    []string // access tokens that reached the MCP handler, in order
	rejects int
	refused map[string]bool
	ignored []string // scopes the server no longer honours (Disregard)
}

// Disregard makes the server ignore scope in every token from now on, as a resource server
// whose policy changed would: a token granted the scope is refused for want of it (403
// insufficient_scope), whatever login comes next.
func (s *Server) Disregard(scope string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ignored = append(s.ignored, scope)
}

// Refuse makes the server reject token from now on, as a resource server that stopped
// trusting it would, while the provider still considers the grant valid.
func (s *Server) Refuse(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused == nil {
		s.refused = map[string]bool{}
	}
	s.refused[token] = true
}

// ServerOptions shape the server.
type ServerOptions struct {
	// Scopes are required of every token at first (see RequireScopes).
	Scopes []string
	// ScopesSupported is the metadata's scopes_supported.
	ScopesSupported []string
	// NoMetadata serves no protected-resource metadata (a 2025-03-26 era server).
	NoMetadata bool
	// MetadataPath serves the protected-resource metadata at this path instead of the
	// well-known one, so that only the challenge's resource_metadata finds it.
	MetadataPath string
	// MetadataResource is the resource the metadata names (default: the server's URL); set
	// it to another URL for a server whose metadata a client must refuse.
	MetadataResource string
	// OpenInitialize answers initialize, notifications and GET without a token and
	// challenges only the requests after them, as servers do that let a client learn what
	// they are before it logs in.
	OpenInitialize bool
}

// NewServer starts the MCP server for provider p. Its resource must be configured in p:
// use [ReserveServer] to know the URL before starting p.
func NewServer(t testing.TB, p *Provider, s *Server, opts ServerOptions) *Server {
	t.Helper()
	s.provider = p
	scopes := slices.Clone(opts.Scopes)
	s.required.Store(&scopes)
	mcpSrv := mcp.NewServer(&mcp.Implementation{Name: "oauth-test-server", Version: "1.0.0"}, nil)
	mcp.AddTool(mcpSrv, &mcp.Tool{Name: "whoami", Description: "returns the token's subject and scopes"},
		func(cx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			ti := req.Extra.TokenInfo
			text := "anonymous"
			if ti != nil {
				text = fmt.Sprintf("user=%s scopes=%s", ti.UserID, strings.Join(ti.Scopes, " "))
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpSrv }, nil)
	mux := http.NewServeMux()
	if opts.MetadataPath != "" {
		s.MetadataURL = strings.TrimSuffix(s.URL, "/mcp") + opts.MetadataPath
	}
	if !opts.NoMetadata {
		resource := s.URL
		if opts.MetadataResource != "" {
			resource = opts.MetadataResource
		}
		mux.Handle(strings.TrimPrefix(s.MetadataURL, strings.TrimSuffix(s.URL, "/mcp")), auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:             resource,
			AuthorizationServers: []string{p.Issuer},
			ScopesSupported:      opts.ScopesSupported,
		}))
	}
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if opts.OpenInitialize && r.Header.Get("Authorization") == "" && open(r) {
			handler.ServeHTTP(w, r)
			return
		}
		req := *s.required.Load()
		o := &auth.RequireBearerTokenOptions{Scopes: req}
		if !opts.NoMetadata {
			o.ResourceMetadataURL = s.MetadataURL
		}
		mw := auth.RequireBearerToken(s.verify, o)
		mw(handler).ServeHTTP(&stepUpWriter{ResponseWriter: w, s: s}, r)
	}))
	s.httpSrv.Config.Handler = mux
	s.httpSrv.Start()
	t.Cleanup(func() {
		s.httpSrv.Close()
		// Sessions whose client could not send its DELETE (refused tokens) end here.
		for ss := range mcpSrv.Sessions() {
			_ = ss.Close()
		}
	})
	return s
}

// open reports whether r is a GET, an initialize request or a notification: what an
// OpenInitialize server answers without a token. The body is restored for the handler.
func open(r *http.Request) bool {
	if r.Method == http.MethodGet {
		return true
	}
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	var msg struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	return msg.Method == "initialize" || strings.HasPrefix(msg.Method, "notifications/")
}

// ReserveServer allocates the server's loopback address so its URL can be configured as
// a resource of the provider before either starts; pass the result to NewServer.
func ReserveServer() *Server {
	hs := httptest.NewUnstartedServer(nil)
	base := "http://" + hs.Listener.Addr().String()
	return &Server{httpSrv: hs, URL: base + "/mcp", MetadataURL: base + "/.well-known/oauth-protected-resource/mcp"}
}

// StartProtected starts a provider that knows the MCP server's introspector client and
// serves a [Server] behind it whose tokens must carry the scope mcp:read: a server that
// needs a login, the setup of most login tests.
func StartProtected(t testing.TB) (*Provider, *Server) {
	t.Helper()
	srv := ReserveServer()
	p := Start(t, Config{
		Clients:   []Client{IntrospectorClient()},
		Resources: map[string]Resource{srv.URL: {Scope: "mcp:read"}},
	})
	NewServer(t, p, srv, ServerOptions{Scopes: []string{"mcp:read"}})
	return p, srv
}

// RequireScopes changes the scopes every token must carry (a 403 insufficient_scope
// otherwise, naming them).
func (s *Server) RequireScopes(scopes ...string) { s.required.Store(&scopes) }

// Tokens returns the access tokens the server accepted, in order (duplicates collapsed).
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// Rejects counts 401 and 403 answers.
func (s *Server) Rejects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rejects
}

func (s *Server) verify(cx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	refused := s.refused[token]
	s.mu.Unlock()
	if refused {
		return nil, fmt.Errorf("%w: refused by the test", auth.ErrInvalidToken)
	}
	info, err := s.provider.Introspect(cx, IntrospectorID, IntrospectorSecret, token)
	if err != nil {
		return nil, err
	}
	if active, _ := info["active"].(bool); !active {
		return nil, fmt.Errorf("%w: inactive token", auth.ErrInvalidToken)
	}
	if aud, _ := info["aud"].(string); aud != s.URL {
		return nil, fmt.Errorf("%w: token audience %q is not this server", auth.ErrInvalidToken, aud)
	}
	exp, _ := info["exp"].(float64)
	scope, _ := info["scope"].(string)
	sub, _ := info["sub"].(string)
	if sub == "" {
		sub, _ = info["client_id"].(string)
	}
	s.mu.Lock()
	if n := len(s.seen); n == 0 || s.seen[n-1] != token {
		s.seen = append(s.seen, token)
	}
	scopes := slices.DeleteFunc(strings.Fields(scope), func(sc string) bool { return slices.Contains(s.ignored, sc) })
	s.mu.Unlock()
	return &auth.TokenInfo{Scopes: scopes, Expiration: time.Unix(int64(exp), 0), UserID: sub}, nil
}

// stepUpWriter adds error="insufficient_scope" to the challenge of a 403, as the MCP
// specification's step-up flow has it (RequireBearerToken names the scopes only).
type stepUpWriter struct {
	http.ResponseWriter
	s *Server
}

func (w *stepUpWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		w.s.mu.Lock()
		w.s.rejects++
		w.s.mu.Unlock()
	}
	if code == http.StatusForbidden {
		h := w.Header()
		if c := h.Get("WWW-Authenticate"); strings.HasPrefix(c, "Bearer ") {
			h.Set("WWW-Authenticate", `Bearer error="insufficient_scope", `+strings.TrimPrefix(c, "Bearer "))
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *stepUpWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *stepUpWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
