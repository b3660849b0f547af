package gateway

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/gateway/access"
	"github.com/cordisgo/harness/mcpauth"
	"github.com/cordisgo/harness/plugins/mcpclient"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Personal servers: hosted MCP servers each person signs in to with their own account
// (access.Personal). A person signs in from their own machine (`harness mcp login NAME
// --gateway URL`: the browser flow runs there, as for any hosted server) and hands the
// resulting credentials (mcpauth.Record: the client registration and the tokens) to the
// gateway (PUT PathPersonal+NAME, with their gateway token). The gateway seals them
// (AES-256-GCM, bound to the person and the server) into its [Vault] — Redis, shared by the
// replicas, or a file — and opens the server only for that person's calls, with an
// mcpauth.Authorizer over their sealed record (refreshing and rotating their tokens there).
// The server's tools are registered in the tool registry from the first person's session,
// under mcp__<name>__<tool>, so calls go through the registry's pipeline like any other:
// the access rules, validation, timeouts, the audit.

// PathPersonal is where a signed-in person manages their logins to personal servers:
// GET PathPersonal (the servers and whether they are signed in), GET and PUT
// PathPersonal+NAME (the server's URL; hand over the credentials), DELETE PathPersonal+NAME
// (forget them).
const PathPersonal = "/auth/servers/"

// ErrNoCredential is matched by the error of a call of a personal server's tool made for a
// person who has not signed in to it.
var ErrNoCredential = errors.New("gateway: not signed in to this server")

// Vault keeps sealed values by name, shared by the replicas. Implementations must be safe
// for concurrent use, and Update atomic with respect to other Updates of the same name
// (on any replica): a rotated refresh token is then used once.
type Vault interface {
	// Sealed returns the value of name, or nil when there is none.
	Sealed(cx context.Context, name string) ([]byte, error)
	// UpdateSealed calls fn with the value of name (nil: none) and stores what it returns
	// (nil: deletes it); an error of fn leaves the value as it was and is returned.
	UpdateSealed(cx context.Context, name string, fn func([]byte) ([]byte, error)) error
}

// personal is a gateway's personal servers. It is safe for concurrent use.
type personal struct {
	g       *Gateway
	vault   Vault
	aead    cipher.AEAD
	servers map[string]access.PersonalServer
	login   func(server string) string // the command that signs in to server

	mu       sync.Mutex
	sessions map[personKey]*personalSession // open sessions by person and server
	listed   map[string]bool                // servers whose tools are registered
	set      *toolregistry.Set
	tools    map[string][]toolregistry.Tool // by server
}

type personKey struct{ person, server string }

// personalSession is one person's session with one personal server.
type personalSession struct {
	once sync.Once
	cs   *mcp.ClientSession
	err  error
	used time.Time // guarded by personal.mu
}

// usePersonal configures the personal servers of pol with vault.
func (g *Gateway) usePersonal(pol *access.Policy, vault Vault, resource string) error {
	pe := pol.Config().Personal
	if pe == nil {
		return nil
	}
	if vault == nil {
		return errors.New("gateway: personal servers need a vault for the credentials (a store, or a file)")
	}
	block, err := aes.NewCipher(pol.PersonalKey())
	if err != nil {
		return fmt.Errorf("gateway: personal.key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return err
	}
	set, err := g.reg.NewSet(g.life, "gateway:personal")
	if err != nil {
		return err
	}
	p := &personal{g: g, vault: vault, aead: aead, servers: pe.Servers, set: set,
		sessions: map[personKey]*personalSession{}, listed: map[string]bool{}, tools: map[string][]toolregistry.Tool{},
		login: func(server string) string { return "harness mcp login " + server + " --gateway " + resource }}
	g.personal.Store(p)
	_, err = g.life.Defer("gateway:personal", func(context.Context) error {
		p.closeAll()
		return nil
	})
	return err
}

// name is the vault name of person's record under key: the person in clear (so that a
// person's values can be found and deleted), the key hashed.
func vaultName(person string, key mcpauth.Key) string {
	h := sha256.Sum256([]byte(key.String()))
	return "cred:" + person + ":" + hex.EncodeToString(h[:12])
}

// seal encrypts plain for person's name: the ciphertext is bound to both (GCM's additional
// data), so a value copied to another person's name does not open.
func (p *personal) seal(name string, plain []byte) ([]byte, error) {
	nonce := make([]byte, p.aead.NonceSize())
	if _, err := io.ReadFull(rand.Reader, nonce); err != nil {
		return nil, err
	}
	return p.aead.Seal(nonce, nonce, plain, []byte("harness-gateway-credential\x00"+name)), nil
}

func (p *personal) open(name string, sealed []byte) ([]byte, error) {
	n := p.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("a sealed credential too short")
	}
	plain, err := p.aead.Open(nil, sealed[:n], sealed[n:], []byte("harness-gateway-credential\x00"+name))
	if err != nil {
		return nil, errors.New("a sealed credential does not open with personal.key (was the key changed? sign in again)")
	}
	return plain, nil
}

// personStore is one person's credentials, as an mcpauth.Store over the vault.
type personStore struct {
	p      *personal
	person string
}

func (s personStore) Load(cx context.Context, key mcpauth.Key) (*mcpauth.Record, error) {
	name := vaultName(s.person, key)
	b, err := s.p.vault.Sealed(cx, name)
	if err != nil || b == nil {
		return nil, err
	}
	return s.p.decode(name, b)
}

func (s personStore) Update(cx context.Context, key mcpauth.Key, fn func(*mcpauth.Record) (*mcpauth.Record, error)) error {
	name := vaultName(s.person, key)
	return s.p.vault.UpdateSealed(cx, name, func(old []byte) ([]byte, error) {
		var rec *mcpauth.Record
		if old != nil {
			var err error
			if rec, err = s.p.decode(name, old); err != nil {
				rec = nil // unreadable: as if there were none
			}
		}
		next, err := fn(rec)
		if err != nil || next == nil {
			return nil, err
		}
		plain, err := json.Marshal(next)
		if err != nil {
			return nil, err
		}
		return s.p.seal(name, plain)
	})
}

func (p *personal) decode(name string, sealed []byte) (*mcpauth.Record, error) {
	plain, err := p.open(name, sealed)
	if err != nil {
		return nil, err
	}
	var rec mcpauth.Record
	if err := json.Unmarshal(plain, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// authorizer returns the mcpauth.Authorizer of person's credentials for server: it never
// opens a browser (the person signs in from their own machine); without credentials it
// answers with the command that signs in.
func (p *personal) authorizer(person, server string) (*mcpauth.Authorizer, error) {
	s, ok := p.servers[server]
	if !ok {
		return nil, fmt.Errorf("%w: no personal server %q", ErrUnknownRoute, server)
	}
	return mcpauth.New(mcpauth.Options{ServerName: server, LoginCommand: p.login(server), ServerURL: s.URL,
		ClientID: s.ClientID, ClientSecret: s.ClientSecret, Scopes: s.Scopes,
		Store: personStore{p: p, person: person}, Logger: p.g.log.With("server", server)})
}

// session returns person's session with server, connecting on first use.
func (p *personal) session(cx context.Context, person, server string) (*mcp.ClientSession, error) {
	k := personKey{person, server}
	p.mu.Lock()
	ps := p.sessions[k]
	if ps == nil {
		ps = &personalSession{}
		p.sessions[k] = ps
	}
	ps.used = time.Now()
	p.mu.Unlock()
	ps.once.Do(func() {
		ps.cs, ps.err = p.connect(cx, person, server)
		if ps.err != nil {
			p.mu.Lock()
			if p.sessions[k] == ps {
				delete(p.sessions, k) // a later call tries again
			}
			p.mu.Unlock()
		}
	})
	return ps.cs, ps.err
}

func (p *personal) connect(cx context.Context, person, server string) (*mcp.ClientSession, error) {
	a, err := p.authorizer(person, server)
	if err != nil {
		return nil, err
	}
	if !a.LoggedIn(cx) {
		return nil, fmt.Errorf("%w: %s has not signed in to %s: run `%s`", ErrNoCredential, person, server, p.login(server))
	}
	hc := &http.Client{Transport: a.Transport(nil)}
	c := mcp.NewClient(&mcp.Implementation{Name: "harness-gateway", Version: "1"}, nil)
	ccx, cancel := context.WithTimeout(context.WithoutCancel(cx), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ccx, &mcp.StreamableClientTransport{Endpoint: p.servers[server].URL, HTTPClient: hc}, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s with %s's login: %w", server, person, err)
	}
	p.learn(ccx, server, cs)
	return cs, nil
}

// learn registers server's tools from a person's session, once.
func (p *personal) learn(cx context.Context, server string, cs *mcp.ClientSession) {
	p.mu.Lock()
	done := p.listed[server]
	p.mu.Unlock()
	if done {
		return
	}
	var tools []toolregistry.Tool
	for t, err := range cs.Tools(cx, nil) {
		if err != nil {
			p.g.log.Warn("listing a personal server's tools failed", "server", server, "err", err)
			return
		}
		raw := t.Name
		params, _ := json.Marshal(t.InputSchema)
		tools = append(tools, toolregistry.Tool{Name: mcpclient.PublicToolName(server, raw), Description: t.Description,
			Parameters: params, Meta: map[string]string{"server": server, "mcpTool": raw, "personal": "true"},
			Execute: func(cx context.Context, call *toolregistry.Call) (*toolregistry.Result, error) {
				return p.call(cx, server, raw, call.Args)
			}})
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.listed[server] {
		return
	}
	p.listed[server] = true
	p.tools[server] = tools
	var all []toolregistry.Tool
	for _, ts := range p.tools {
		all = append(all, ts...)
	}
	if err := p.set.Replace(all); err != nil {
		p.g.log.Warn("registering a personal server's tools failed", "server", server, "err", err)
	}
}

// call runs server's tool raw for the person the call is made for, with their session.
func (p *personal) call(cx context.Context, server, raw string, args json.RawMessage) (*toolregistry.Result, error) {
	who, ok := access.PersonFrom(cx)
	if !ok {
		return nil, fmt.Errorf("%w: %s is a personal server: its tools are called for a signed-in person only", ErrNoCredential, server)
	}
	cs, err := p.session(cx, who.ID, server)
	if err != nil {
		return nil, err
	}
	res, err := cs.CallTool(cx, &mcp.CallToolParams{Name: raw, Arguments: args})
	if err != nil {
		p.drop(personKey{who.ID, server}, cs) // the next call connects again
		return nil, err
	}
	return mcpclient.AdaptResult(raw, res, p.g.reg.Attachments(), 0), nil
}

// drop forgets a broken session.
func (p *personal) drop(k personKey, cs *mcp.ClientSession) {
	p.mu.Lock()
	if ps := p.sessions[k]; ps != nil && ps.cs == cs {
		delete(p.sessions, k)
	}
	p.mu.Unlock()
	_ = cs.Close()
}

// forget ends person's session with server (their credentials changed or went).
func (p *personal) forget(person, server string) {
	k := personKey{person, server}
	p.mu.Lock()
	ps := p.sessions[k]
	delete(p.sessions, k)
	p.mu.Unlock()
	if ps != nil && ps.cs != nil {
		_ = ps.cs.Close()
	}
}

func (p *personal) closeAll() {
	p.mu.Lock()
	all := p.sessions
	p.sessions = map[personKey]*personalSession{}
	p.mu.Unlock()
	for _, ps := range all {
		if ps.cs != nil {
			_ = ps.cs.Close()
		}
	}
}

// PersonalServerInfo is what GET PathPersonal+NAME answers: the server, and whether the
// person has signed in to it. It is a plain value.
type PersonalServerInfo struct {
	Name     string   `json:"name"`
	URL      string   `json:"url"`
	ClientID string   `json:"clientId,omitempty"`
	Scopes   []string `json:"scopes,omitempty"`
	SignedIn bool     `json:"signedIn"`
}

// servePersonal serves PathPersonal for the signed-in person of req.
func (p *personal) servePersonal(w http.ResponseWriter, req *http.Request, who access.Person) {
	name := strings.Trim(strings.TrimPrefix(req.URL.Path, PathPersonal), "/")
	if name == "" && req.Method == http.MethodGet {
		var out []PersonalServerInfo
		for n := range p.servers {
			out = append(out, p.info(req.Context(), who.ID, n))
		}
		slices.SortFunc(out, func(a, b PersonalServerInfo) int { return strings.Compare(a.Name, b.Name) })
		writeJSON(w, out)
		return
	}
	if _, ok := p.servers[name]; !ok {
		http.Error(w, fmt.Sprintf("no personal server %q (personal servers: %s)", name, strings.Join(sortedKeys(p.servers), ", ")), http.StatusNotFound)
		return
	}
	switch req.Method {
	case http.MethodGet:
		writeJSON(w, p.info(req.Context(), who.ID, name))
	case http.MethodPut:
		var rec mcpauth.Record
		if err := json.NewDecoder(io.LimitReader(req.Body, 1<<20)).Decode(&rec); err != nil || rec.Token == nil {
			http.Error(w, "want the credentials record of a login (mcpauth.Record with a token)", http.StatusBadRequest)
			return
		}
		a, err := p.authorizer(who.ID, name)
		if err == nil {
			err = mcpauth.Save(req.Context(), personStore{p: p, person: who.ID}, a.Key(), &rec)
		}
		if err != nil {
			http.Error(w, "storing the credentials: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		p.forget(who.ID, name)
		// Connect now: the login is proved to work, and the server's tools are registered
		// (from the first person's session) before the person is told they may call them.
		if _, err := p.session(req.Context(), who.ID, name); err != nil {
			http.Error(w, fmt.Sprintf("the credentials were stored, but %s refused them: %v", name, err), http.StatusBadGateway)
			return
		}
		p.g.log.Info("a person signed in to a personal server", "person", who.ID, "server", name)
		writeJSON(w, p.info(req.Context(), who.ID, name))
	case http.MethodDelete:
		a, err := p.authorizer(who.ID, name)
		if err == nil {
			err = mcpauth.Delete(req.Context(), personStore{p: p, person: who.ID}, a.Key())
		}
		if err != nil {
			http.Error(w, "forgetting the credentials: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		p.forget(who.ID, name)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, PUT, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

func (p *personal) info(cx context.Context, person, name string) PersonalServerInfo {
	s := p.servers[name]
	out := PersonalServerInfo{Name: name, URL: s.URL, ClientID: s.ClientID, Scopes: s.Scopes}
	if a, err := p.authorizer(person, name); err == nil {
		out.SignedIn = a.LoggedIn(cx)
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
