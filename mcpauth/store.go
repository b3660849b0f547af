package mcpauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cordisgo/harness/internal/atomicfile"
	"github.com/cordisgo/harness/internal/userdirs"
)

// Key identifies a stored credential: the MCP server's canonical URL (the RFC 8707
// resource) and the client that obtained it ("" for the dynamically registered or
// metadata-document client, else the configured client ID). It is a plain value.
type Key struct {
	Server string `json:"server"`
	Client string `json:"client,omitempty"`
}

// String returns "server" or "server#client"; it is the file store's map key.
func (k Key) String() string {
	if k.Client == "" {
		return k.Server
	}
	return k.Server + "#" + k.Client
}

// Token is a stored OAuth token. Its String and LogValue never show the token values.
type Token struct {
	AccessToken  string    `json:"access_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Scope is the granted scope (space separated), from the token response or, when it
	// has none, the requested one.
	Scope string `json:"scope,omitempty"`
}

// String describes the token without its values.
func (t *Token) String() string {
	if t == nil {
		return "<no token>"
	}
	return fmt.Sprintf("token(access=%t refresh=%t expiry=%s scope=%q)", t.AccessToken != "",
		t.RefreshToken != "", t.Expiry.UTC().Format(time.RFC3339), t.Scope)
}

// LogValue makes slog print the redacted form.
func (t *Token) LogValue() slog.Value { return slog.StringValue(t.String()) }

// ClientInfo is the client identity used with one authorization server.
type ClientInfo struct {
	// ID and Secret are the client's credentials ("" secret: a public client).
	ID     string `json:"client_id"`
	Secret string `json:"client_secret,omitempty"`
	// AuthMethod is the token endpoint authentication method: client_secret_basic,
	// client_secret_post, private_key_jwt or none.
	AuthMethod string `json:"token_endpoint_auth_method,omitempty"`
	// Kind says where the identity came from: "preregistered", "metadata-document" or
	// "dynamic" (RFC 7591, stored and reused).
	Kind string `json:"kind"`
	// Issuer is the authorization server the identity belongs to.
	Issuer string `json:"issuer,omitempty"`
	// RedirectURI is the redirect URI registered for a dynamic client.
	RedirectURI string `json:"redirect_uri,omitempty"`
	// SecretExpiresAt is when a dynamic client's secret expires (zero: never).
	SecretExpiresAt time.Time `json:"client_secret_expires_at,omitzero"`
}

// Record is everything stored for one [Key]: the authorization server's endpoints (so a
// restart can refresh without discovery), the client identity, the current token and the
// granted scopes. Its String and LogValue never show secrets.
type Record struct {
	Resource      string   `json:"resource"`
	Issuer        string   `json:"issuer,omitempty"`
	AuthEndpoint  string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint string   `json:"token_endpoint,omitempty"`
	TokenMethods  []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	// RevocationEndpoint (RFC 7009), when the server has one, is where logout revokes.
	RevocationEndpoint string      `json:"revocation_endpoint,omitempty"`
	Client             *ClientInfo `json:"client,omitempty"`
	Token              *Token      `json:"token,omitempty"`
	Scopes             []string    `json:"scopes,omitempty"`
	// Challenge is what the server last asked for when it refused a request (401 or 403),
	// kept until the next login uses it: a login in this process or another (`harness mcp
	// login` after a client reported needs-auth) starts its discovery and scope selection
	// from it.
	Challenge *Challenge `json:"challenge,omitempty"`
	UpdatedAt time.Time  `json:"updated_at,omitzero"`
}

// Challenge is the Bearer challenge (RFC 6750 §3, RFC 9728 §5.1) of a refused request. It
// is a plain value.
type Challenge struct {
	// ResourceMetadata is the challenge's resource_metadata URL.
	ResourceMetadata string `json:"resource_metadata,omitempty"`
	// Scope is the scope the server asked for.
	Scope []string `json:"scope,omitempty"`
	// Error is the challenge's error code, e.g. "invalid_token" or "insufficient_scope".
	Error string `json:"error,omitempty"`
}

// String describes the record without secrets.
func (r *Record) String() string {
	if r == nil {
		return "<no record>"
	}
	client := "<none>"
	if r.Client != nil {
		client = r.Client.Kind
	}
	return fmt.Sprintf("record(resource=%q issuer=%q client=%s %s)", r.Resource, r.Issuer, client, r.Token)
}

// LogValue makes slog print the redacted form.
func (r *Record) LogValue() slog.Value { return slog.StringValue(r.String()) }

func (r *Record) clone() *Record {
	if r == nil {
		return nil
	}
	c := *r
	c.TokenMethods = slices.Clone(r.TokenMethods)
	c.Scopes = slices.Clone(r.Scopes)
	if r.Challenge != nil {
		ch := *r.Challenge
		ch.Scope = slices.Clone(r.Challenge.Scope)
		c.Challenge = &ch
	}
	if r.Client != nil {
		ci := *r.Client
		c.Client = &ci
	}
	if r.Token != nil {
		t := *r.Token
		c.Token = &t
	}
	return &c
}

// Store keeps credentials between runs. Implementations must be safe for concurrent use
// by goroutines and, for a store shared between processes (a file, a keychain), by
// processes: Update must be atomic with respect to other Updates of the same key, which is
// how a rotated refresh token is never sent twice.
type Store interface {
	// Load returns the record for key, or nil when there is none.
	Load(cx context.Context, key Key) (*Record, error)
	// Update calls fn with the stored record (nil when there is none) under the store's
	// lock and stores what fn returns: a nil record deletes the entry; an error leaves the
	// store unchanged and is returned.
	Update(cx context.Context, key Key, fn func(*Record) (*Record, error)) error
}

// Save stores rec under key.
func Save(cx context.Context, s Store, key Key, rec *Record) error {
	return s.Update(cx, key, func(*Record) (*Record, error) { return rec, nil })
}

// Delete removes key's record (logout).
func Delete(cx context.Context, s Store, key Key) error {
	return s.Update(cx, key, func(*Record) (*Record, error) { return nil, nil })
}

// DefaultStorePath is the credentials file: $XDG_STATE_HOME/harness/credentials.json,
// else ~/.local/state/harness/credentials.json, on every system (userdirs.Env.XDGState:
// macOS and Windows too, not their own state directories), read from the process's
// environment.
func DefaultStorePath() (string, error) {
	dir, err := userdirs.Env{}.XDGState()
	if err != nil {
		return "", fmt.Errorf("credentials store: no state directory: %w", err)
	}
	return filepath.Join(dir, "harness", "credentials.json"), nil
}

// FileStore is a [Store] in one JSON file, mode 0600 in a 0700 directory. Every Update
// takes an exclusive lock on a sibling ".lock" file (flock on Unix), re-reads the file and
// replaces it atomically (a temporary file renamed over it), so processes sharing it
// (a running host and a CLI command) never lose or reuse each other's tokens. It is safe
// for concurrent use.
type FileStore struct {
	path string
	mu   sync.Mutex
}

// NewFileStore returns a store at path (see [DefaultStorePath]); the file is created on
// the first write.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

// Path returns the file's path.
func (s *FileStore) Path() string { return s.path }

// fileDoc is the file's content.
type fileDoc struct {
	Version int                `json:"version"`
	Entries map[string]*Record `json:"entries"`
}

// ErrStoreCorrupt is matched by errors about an unreadable credentials file.
var ErrStoreCorrupt = errors.New("credentials file is not valid")

func (s *FileStore) read() (*fileDoc, error) {
	doc := &fileDoc{Version: 1, Entries: map[string]*Record{}}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credentials store %s: %w", s.path, err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return doc, nil
	}
	if err := json.Unmarshal(b, doc); err != nil {
		return nil, fmt.Errorf("credentials store %s: %w: %w", s.path, ErrStoreCorrupt, err)
	}
	if doc.Entries == nil {
		doc.Entries = map[string]*Record{}
	}
	return doc, nil
}

func (s *FileStore) write(doc *fileDoc) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.path, append(b, '\n'), atomicfile.Options{Mode: 0o600, DirMode: 0o700}); err != nil {
		return fmt.Errorf("credentials store: %w", err)
	}
	return nil
}

// Load implements [Store].
func (s *FileStore) Load(_ context.Context, key Key) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := os.Stat(s.path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // nothing stored: no lock file either (a server without OAuth costs nothing)
	}
	unlock, err := lockFile(s.path + ".lock")
	if err != nil {
		return nil, fmt.Errorf("credentials store %s: lock: %w", s.path, err)
	}
	defer unlock()
	doc, err := s.read()
	if err != nil {
		return nil, err
	}
	return doc.Entries[key.String()].clone(), nil
}

// Update implements [Store].
func (s *FileStore) Update(_ context.Context, key Key, fn func(*Record) (*Record, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("credentials store %s: %w", s.path, err)
	}
	unlock, err := lockFile(s.path + ".lock")
	if err != nil {
		return fmt.Errorf("credentials store %s: lock: %w", s.path, err)
	}
	defer unlock()
	doc, err := s.read()
	if err != nil {
		return err
	}
	k := key.String()
	next, err := fn(doc.Entries[k].clone())
	if err != nil {
		return err
	}
	if next == nil {
		if _, ok := doc.Entries[k]; !ok {
			return nil
		}
		delete(doc.Entries, k)
	} else {
		doc.Entries[k] = next.clone()
	}
	return s.write(doc)
}

// Keys lists the stored keys, sorted.
func (s *FileStore) Keys(cx context.Context) ([]Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc, err := s.read()
	if err != nil {
		return nil, err
	}
	var keys []Key
	for _, k := range slices.Sorted(mapKeys(doc.Entries)) {
		srv, client, _ := strings.Cut(k, "#")
		keys = append(keys, Key{Server: srv, Client: client})
	}
	return keys, nil
}

func mapKeys(m map[string]*Record) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// MemoryStore is a [Store] in memory, for tests and for callers that must not persist
// anything. It is safe for concurrent use.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string]*Record
}

// Load implements [Store].
func (s *MemoryStore) Load(_ context.Context, key Key) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key.String()].clone(), nil
}

// Update implements [Store].
func (s *MemoryStore) Update(_ context.Context, key Key, fn func(*Record) (*Record, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := fn(s.m[key.String()].clone())
	if err != nil {
		return err
	}
	if s.m == nil {
		s.m = map[string]*Record{}
	}
	if next == nil {
		delete(s.m, key.String())
	} else {
		s.m[key.String()] = next.clone()
	}
	return nil
}
