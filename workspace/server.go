package workspace

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/loopback"
	"github.com/cordisgo/harness/internal/mcpserve"
)

// DefaultName is the implementation name the server reports when [Options.Name] is empty.
const DefaultName = "harness-workspace"

// version is the implementation version reported to clients.
const version = "0.1.0"

// Mode is what the workspace lets its tools and commands change, named as Codex names its
// sandbox modes.
type Mode string

// The modes.
const (
	// ModeReadOnly offers no file-writing tools; shell commands run with the whole file
	// system read-only but for a private temporary directory.
	ModeReadOnly Mode = "read-only"
	// ModeWorkspaceWrite (the default) writes files inside the root; shell commands may
	// write only inside the root, the private temporary directory, the sandbox's cache and
	// Options.Writable.
	ModeWorkspaceWrite Mode = "workspace-write"
	// ModeFullAccess runs shell commands without a sandbox (the file tools still keep to
	// the root).
	ModeFullAccess Mode = "danger-full-access"
)

// Modes lists the modes, for messages and flag help.
var Modes = []Mode{ModeReadOnly, ModeWorkspaceWrite, ModeFullAccess}

// ParseMode returns the mode called s ("" is ModeWorkspaceWrite).
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeWorkspaceWrite, nil
	}
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("workspace mode %q: expected %q, %q or %q", s, ModeReadOnly, ModeWorkspaceWrite, ModeFullAccess)
}

// Options configures a workspace server. The zero value serves the working directory in
// workspace-write mode without network access for commands.
//
// Options is a plain value: New copies it.
type Options struct {
	// Root is the directory the tools work in; "" is the working directory.
	Root string
	// Mode is read-only, workspace-write ("": the default) or danger-full-access.
	Mode Mode
	// Network lets shell commands use the network (in danger-full-access they always can).
	Network bool
	// DenyRead lists paths (files or directories) no tool reads and no sandboxed command
	// can read, on top of [DefaultDenyRead]'s.
	DenyRead []string
	// Writable lists further directories sandboxed commands may write in
	// (workspace-write).
	Writable []string
	// Env is the environment commands inherit from, before the credential-shaped names
	// are removed (nil: os.Environ()).
	Env []string
	// Shell is the shell that runs commands as SHELL -c COMMAND ("": bash).
	Shell string
	// SandboxHelper runs a command under the sandbox: the program re-executed with
	// sandbox.HelperArg (nil: this executable, os.Executable). Tests point it at their own
	// binary.
	SandboxHelper []string
	// CacheDir is the cache directory sandboxed commands may write and get as
	// XDG_CACHE_HOME and GOCACHE's parent ("": harness/sandbox-cache in the user's cache
	// directory).
	CacheDir string
	// Name is the implementation name reported to clients ("": DefaultName).
	Name string
	// Logger receives the server's records; nil discards them.
	Logger *slog.Logger
}

// Server is a workspace: its root, its tools' state (what was read, the running jobs) and
// the MCP server that offers the tools. Make one with [New]; Close ends its jobs and
// removes its temporary files.
//
// A Server is safe for concurrent use: every tool call runs on its own goroutine.
type Server struct {
	opts   Options
	root   *root
	mcp    *mcp.Server
	log    *slog.Logger
	reads  *readRecords
	shell  *shell
	closed sync.Once
}

// New opens the workspace described by opts and returns its server, with the tools its
// mode offers registered.
func New(opts Options) (*Server, error) {
	mode, err := ParseMode(string(opts.Mode))
	if err != nil {
		return nil, err
	}
	opts.Mode = mode
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := opts.Root
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("workspace: no root given and no working directory: %w", err)
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("workspace: root %q: %w", opts.Root, err)
	}
	deny, err := denyList(opts, dir)
	if err != nil {
		return nil, err
	}
	r, err := openRoot(dir, deny)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	s := &Server{opts: opts, root: r, log: log, reads: newReadRecords()}
	sh, err := newShell(s)
	if err != nil {
		_ = r.close()
		return nil, err
	}
	s.shell = sh
	s.mcp = mcp.NewServer(&mcp.Implementation{
		Name:        opts.Name,
		Title:       "Harness workspace",
		Version:     version,
		Description: s.describe(),
	}, &mcp.ServerOptions{
		Instructions: s.instructions(),
		Logger:       log,
		SchemaCache:  schemaCache,
	})
	s.addTools()
	if w := s.shell.warning(); w != "" {
		log.Warn(w)
	}
	return s, nil
}

// schemaCache is shared by every workspace server, so that New does not repeat schema
// reflection.
var schemaCache = mcp.NewSchemaCache()

// MCP returns the MCP server offering the tools; connect it to any transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Root returns the root directory, absolute with its symbolic links resolved.
func (s *Server) Root() string { return s.root.dir }

// Sandbox reports the shell's sandbox: the mode, and what the kernel enforces of it.
func (s *Server) Sandbox() Enforcement { return s.shell.enforcement }

// Close ends every running job (their process groups are killed), removes the temporary
// directory and the jobs' output, and closes the root. It is idempotent.
func (s *Server) Close() error {
	var err error
	s.closed.Do(func() {
		err = s.shell.close()
		if cerr := s.root.close(); err == nil {
			err = cerr
		}
	})
	return err
}

// describe is the server's one-line description (serverInfo.description), which `harness
// mcp list` and `probe` show: the root, the mode and the enforcement reached.
func (s *Server) describe() string {
	return fmt.Sprintf("workspace %s, %s", s.root.dir, s.shell.enforcement.Summary())
}

// instructions tells the model what the workspace is.
func (s *Server) instructions() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Files and a shell in the workspace %s (paths are relative to it; nothing outside it is reachable by the file tools). ", s.root.dir)
	b.WriteString("read_file reads a file (numbered lines), list_dir lists a directory, glob finds files by pattern and grep searches their text; " +
		"glob and grep skip what .gitignore ignores. ")
	if s.opts.Mode != ModeReadOnly {
		b.WriteString("edit_file replaces exact text and write_file writes a whole file; both return the diff. ")
	} else {
		b.WriteString("The workspace is read-only: there are no tools that write files. ")
	}
	b.WriteString("shell runs a bash command in the root (" + s.shell.enforcement.Summary() + ").")
	return b.String()
}

// ServeIO serves one session read from r and written to w until cx is done or r ends; over
// the process's own stdin and stdout, as a stdio server (mcpserve.Stdio).
func (s *Server) ServeIO(cx context.Context, r io.Reader, w io.Writer) error {
	if err := mcpserve.Stdio(cx, s.mcp, r, w); err != nil {
		return fmt.Errorf("workspace: serving: %w", err)
	}
	return nil
}

// HTTPOptions configures [Server.ServeHTTP].
type HTTPOptions struct {
	// Token is the bearer token every request must carry; empty requires NoAuth.
	Token string
	// NoAuth serves without a token, refused unless the listener is on the loopback.
	NoAuth bool
	// Hosts and Origins are accepted besides the loopback's (see loopback.Options).
	Hosts, Origins []string
}

// ServeHTTP serves Streamable HTTP at /mcp on ln (which it closes) until cx is done,
// announcing the URL on a line of its own to announce. Every request is checked for its
// Host and Origin headers (403) and its bearer token (401). Running jobs end when it stops.
func (s *Server) ServeHTTP(cx context.Context, ln net.Listener, opts HTTPOptions, announce io.Writer) error {
	addr := ln.Addr().String()
	switch {
	case opts.NoAuth && !loopback.IsLoopback(addr):
		_ = ln.Close()
		return fmt.Errorf("workspace: serving without a token is refused on %s, which is not the loopback", addr)
	case !opts.NoAuth && opts.Token == "":
		_ = ln.Close()
		return fmt.Errorf("workspace: serving HTTP needs a bearer token (or no authentication on the loopback)")
	}
	return mcpserve.ServeHTTP(cx, ln, s.mcp, mcpserve.HTTPOptions{
		What:       "workspace server",
		Guard:      loopback.Options{Addr: addr, Hosts: opts.Hosts, Origins: opts.Origins, Token: opts.Token},
		NoAuth:     opts.NoAuth,
		Logger:     s.log,
		OnShutdown: s.shell.stopAll,
	}, announce)
}
