// Package catalog is the catalog of MCP servers on disk: what each server listed (its
// tools, prompts, resources and resource templates, its instructions and identity), cached
// per server name and configuration hash, so that a lazy server's tools can be registered
// and searched without starting it.
//
// # Format
//
// A catalog file is one JSON document:
//
//	{"servers": {"NAME": {"tools": [Tool...], "prompts": [...], "resources": [...], ...}}}
//
// where each Tool (Prompt, Resource, ResourceTemplate) is the object as the server's
// tools/list (prompts/list, …) result carries it. Only "tools" is required; a file of other
// servers' tools/list results in this shape is a catalog too (`harness tools search
// --catalog FILE`). The cache keeps one such file per server and configuration:
// NAME.HASH.json in the store's directory ([DefaultDir]), written atomically with mode
// 0600, where HASH is [Server.ConfigHash] cut to 16 hex digits. The entries the cache
// writes also carry configHash, serverInfo, protocolVersion, instructions and updatedAt.
//
// The configuration hash ([Hash]) is computed by the client from the resolved configuration
// with every secret value replaced by its own hash, so a catalog file never holds a secret
// and a changed command, URL, token or tool filter is a different catalog entry.
//
// # Concurrency
//
// A [Store] is safe for concurrent use by goroutines and processes: readers see either the
// previous file or the new one, never a partial write. A file that cannot be read as a
// catalog is ignored with a warning, as if it were absent.
package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/atomicfile"
	"github.com/cordisgo/harness/internal/userdirs"
)

// File is a catalog document: servers by name. It is a plain value.
type File struct {
	Servers map[string]*Server `json:"servers"`
}

// Server is one server's entry in a catalog: what it listed, and (in the cache) what
// identifies the configuration it was listed with. It is a plain value; treat a loaded
// one as immutable.
type Server struct {
	// ConfigHash is the [Hash] of the configuration the lists were read with (cache
	// entries only).
	ConfigHash string `json:"configHash,omitempty"`
	// ServerInfo and ProtocolVersion are the server's initialize answer.
	ServerInfo      *mcp.Implementation `json:"serverInfo,omitempty"`
	ProtocolVersion string              `json:"protocolVersion,omitempty"`
	// Instructions are the server's instructions, as sent.
	Instructions string `json:"instructions,omitempty"`
	// Tools is the server's tools/list, every page, in its order (the client's
	// allowedTools and deniedTools applied).
	Tools []*mcp.Tool `json:"tools"`
	// Prompts, Resources and ResourceTemplates are the other lists, when the server offers
	// them.
	Prompts           []*mcp.Prompt           `json:"prompts,omitempty"`
	Resources         []*mcp.Resource         `json:"resources,omitempty"`
	ResourceTemplates []*mcp.ResourceTemplate `json:"resourceTemplates,omitempty"`
	// UpdatedAt is when the entry was written.
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// ErrNotCached is returned by [Store.Load] when the store has no entry.
var ErrNotCached = errors.New("catalog: no cached catalog")

// ErrUnusable is matched by the error of [Store.Load] for a cache file that cannot be used
// (not a catalog, another server or configuration).
var ErrUnusable = errors.New("catalog: unusable catalog cache file")

// Key is the optional catalog service: MCP clients look it up when they mount, to register
// a lazy server's cached tools and to keep the cache current. The harness binary provides
// one at the root, in the user's cache directory.
var Key = ctx.NewKey[*Store]("mcpCatalog")

// Options configure a [Store].
type Options struct {
	// Dir is the directory of the cache files; created (0700) when first written. Empty
	// means [DefaultDir].
	Dir string
	// Startup is the fleet's default startup of servers that set none: "" or "eager"
	// (connect when mounted), or "lazy" (see mcpclient.Config.Startup).
	Startup string
	// IdleTimeout is the fleet's default idle time after which a lazy server is stopped,
	// for servers that set none; 0 means mcpclient's default.
	IdleTimeout time.Duration
	// Logger receives the warnings about unusable files; nil means slog.Default().
	Logger *slog.Logger
}

// Store is a catalog cache directory. It is safe for concurrent use.
type Store struct {
	dir  string
	opts Options
	log  *slog.Logger
}

// DefaultDir returns mcp-catalog in the harness directory of the user's cache directory in
// the process's environment (userdirs.Env.Cache: $XDG_CACHE_HOME/harness/mcp-catalog or
// ~/.cache/harness/mcp-catalog on Linux).
func DefaultDir() (string, error) {
	dir, err := userdirs.Env{}.Cache()
	if err != nil {
		return "", fmt.Errorf("catalog: %w", err)
	}
	return filepath.Join(dir, "harness", "mcp-catalog"), nil
}

// Open returns the store of opts.Dir (nothing is read or created yet).
func Open(opts Options) (*Store, error) {
	if opts.Dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return nil, err
		}
		opts.Dir = d
	}
	switch opts.Startup {
	case "", "eager", "lazy":
	default:
		return nil, fmt.Errorf("catalog: startup %q: expected eager or lazy", opts.Startup)
	}
	if opts.IdleTimeout < 0 {
		return nil, fmt.Errorf("catalog: idle timeout %v: must not be negative", opts.IdleTimeout)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Store{dir: opts.Dir, opts: opts, log: log}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Startup returns the fleet's default startup ("", "eager" or "lazy").
func (s *Store) Startup() string { return s.opts.Startup }

// IdleTimeout returns the fleet's default idle timeout (0: the client's default).
func (s *Store) IdleTimeout() time.Duration { return s.opts.IdleTimeout }

// hashLen is how many hex digits of the configuration hash name a cache file.
const hashLen = 16

// path returns the file of server's entry for hash.
func (s *Store) path(server, hash string) string {
	if len(hash) > hashLen {
		hash = hash[:hashLen]
	}
	return filepath.Join(s.dir, server+"."+hash+".json")
}

// Load returns the cached entry of server for the configuration hash. It returns
// [ErrNotCached] when there is none, and an error matching [ErrUnusable] (naming the file
// and the problem) when the file is not a catalog or holds another server or
// configuration: the caller warns and goes on as if nothing were cached.
func (s *Store) Load(server, hash string) (*Server, error) {
	p := s.path(server, hash)
	f, err := ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotCached
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	e := f.Servers[server]
	if e == nil || e.ConfigHash != hash {
		return nil, fmt.Errorf("%w: %s: no entry of server %q with configuration hash %s", ErrUnusable, p, server, hash)
	}
	return e, nil
}

// Has reports whether the store has a file for server's entry for the configuration hash,
// without reading it (Load says whether it is usable).
func (s *Store) Has(server, hash string) bool {
	_, err := os.Stat(s.path(server, hash))
	return err == nil
}

// Save writes e as server's entry (e.ConfigHash names the file) atomically, mode 0600,
// unless the file holds the same lists already (a server that listed what it listed last
// time costs a read, not a write). e is not modified; UpdatedAt is set in what is written.
func (s *Store) Save(server string, e *Server) error {
	if e == nil || e.ConfigHash == "" {
		return errors.New("catalog: an entry to save needs its configuration hash")
	}
	cp := *e
	cp.UpdatedAt = time.Time{}
	if cp.Tools == nil {
		cp.Tools = []*mcp.Tool{}
	}
	path := s.path(server, e.ConfigHash)
	same, err := sameEntry(path, server, &cp)
	if err != nil {
		return fmt.Errorf("catalog: server %q: %w", server, err)
	}
	if same {
		return nil
	}
	cp.UpdatedAt = time.Now().UTC()
	data, err := json.Marshal(File{Servers: map[string]*Server{server: &cp}})
	if err != nil {
		return fmt.Errorf("catalog: server %q: %w", server, err)
	}
	// A cache: lost on a crash, it is rebuilt by the next listing, so no fsync.
	if err := atomicfile.Write(path, data, atomicfile.Options{Mode: 0o600, DirMode: 0o700, NoSync: true}); err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	return nil
}

// sameEntry reports whether the catalog file at path holds e as server's entry (UpdatedAt
// aside; e's is zero). A missing or unusable file is not the same.
func sameEntry(path, server string, e *Server) (bool, error) {
	f, err := ReadFile(path)
	if err != nil {
		return false, nil
	}
	old := f.Servers[server]
	if old == nil || len(f.Servers) != 1 {
		return false, nil
	}
	o := *old
	o.UpdatedAt = time.Time{}
	a, err := json.Marshal(&o)
	if err != nil {
		return false, nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return false, err
	}
	return string(a) == string(b), nil
}

// Catalog returns every cached server as one catalog: for a name cached with several
// configurations, the entry written last. Unusable files are skipped with a warning; a
// directory that does not exist is an empty catalog.
func (s *Store) Catalog() (*File, error) {
	out := &File{Servers: map[string]*Server{}}
	ents, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	for _, de := range ents {
		name := de.Name()
		if de.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		p := filepath.Join(s.dir, name)
		f, err := ReadFile(p)
		if err != nil {
			s.log.Warn("ignoring an unusable catalog cache file", "file", p, "err", err)
			continue
		}
		for n, e := range f.Servers {
			if prev := out.Servers[n]; prev == nil || e.UpdatedAt.After(prev.UpdatedAt) {
				out.Servers[n] = e
			}
		}
	}
	return out, nil
}

// ReadFile reads a catalog file: {"servers": {"NAME": {"tools": [...]}}}. Every server
// must have a tools array and every tool a name; the error says which is not so.
func ReadFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Parse decodes a catalog document (see [ReadFile]).
func Parse(data []byte) (*File, error) {
	var raw struct {
		Servers map[string]json.RawMessage `json:"servers"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not a catalog (expected {\"servers\": {NAME: {\"tools\": [...]}}}): %w", err)
	}
	if raw.Servers == nil {
		return nil, errors.New(`not a catalog: no "servers" object`)
	}
	f := &File{Servers: make(map[string]*Server, len(raw.Servers))}
	names := make([]string, 0, len(raw.Servers))
	for n := range raw.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var e Server
		if err := json.Unmarshal(raw.Servers[n], &e); err != nil {
			return nil, fmt.Errorf("servers.%s: %w", n, err)
		}
		if e.Tools == nil {
			return nil, fmt.Errorf(`servers.%s: no "tools" array`, n)
		}
		for i, t := range e.Tools {
			if t == nil || t.Name == "" {
				return nil, fmt.Errorf("servers.%s.tools[%d]: a tool needs a name", n, i)
			}
		}
		f.Servers[n] = &e
	}
	return f, nil
}

// Hash returns the hex SHA-256 of v's JSON encoding: the configuration hash of a cache
// entry. Callers pass what identifies a server's lists (command, arguments, URL, tool
// filters, …) with every secret already replaced by [SecretHash].
func Hash(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("catalog: hashing a configuration: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// SecretHash returns what stands for a secret value in hashed material: its SHA-256, so a
// changed token changes the configuration hash while the value is never written.
func SecretHash(v string) string {
	sum := sha256.Sum256([]byte("mcpcatalog-secret\x00" + v))
	return "sha256:" + hex.EncodeToString(sum[:])
}
