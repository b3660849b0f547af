package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cordisgo/harness/internal/userdirs"
	"github.com/cordisgo/harness/plugins/mcpclient/transport"
	"github.com/cordisgo/harness/workspace/sandbox"
)

// Limits and defaults of the shell tools. They are in the tools' descriptions.
const (
	defaultShellTimeout = 120 * time.Second
	maxShellTimeout     = 600 * time.Second
	// A command's result shows its output up to shellShown bytes: the first shellHead and
	// the last shellShown-shellHead; the whole output is kept (up to maxJobOutput) for
	// shell_output to page through.
	shellShown   = 30 << 10
	shellHead    = 6 << 10
	maxJobOutput = 64 << 20
	// maxPage is the most output one shell_output call returns.
	maxPage = 30 << 10
	// maxJobs bounds the jobs kept; the oldest finished ones are forgotten beyond it.
	maxJobs = 100
	// killGrace is the time a command's group gets between SIGTERM and SIGKILL.
	killGrace = 2 * time.Second
)

// Enforcement is the shell's sandbox as configured and as the kernel enforces it.
type Enforcement struct {
	Mode    Mode `json:"mode"`
	Network bool `json:"network"`
	sandbox.Report
}

// Summary words the enforcement in one line, as `harness mcp list`, `probe` and the shell
// tool's description show it.
func (e Enforcement) Summary() string {
	net := "network off"
	if e.Network || e.Mode == ModeFullAccess {
		net = "network on"
	}
	return fmt.Sprintf("sandbox %s, %s, %s", e.Mode, net, e.Report)
}

// shell runs the commands: their environment, their sandbox, their jobs.
type shell struct {
	s           *Server
	bash        string // absolute, or "" when not found
	bashErr     error
	env         []string
	policy      sandbox.Policy
	enforcement Enforcement
	tmp         string // the commands' private temporary directory
	outDir      string // the jobs' output files
	helper      []string

	mu     sync.Mutex
	jobs   map[int]*job
	nextID int
	closed bool
}

// newShell prepares the shell of s: its directories, environment and policy, and what the
// kernel enforces of it.
func newShell(s *Server) (*shell, error) {
	opts := s.opts
	sh := &shell{s: s, jobs: map[int]*job{}, helper: opts.SandboxHelper}
	name := opts.Shell
	if name == "" {
		name = "bash"
	}
	sh.bash, sh.bashErr = lookPath(name)
	var err error
	if sh.tmp, err = os.MkdirTemp("", "harness-workspace-tmp-"); err != nil {
		return nil, fmt.Errorf("workspace: the commands' temporary directory: %w", err)
	}
	if sh.outDir, err = os.MkdirTemp("", "harness-workspace-jobs-"); err != nil {
		_ = os.RemoveAll(sh.tmp)
		return nil, fmt.Errorf("workspace: the jobs' output directory: %w", err)
	}
	parent := opts.Env
	if parent == nil {
		parent = os.Environ()
	}
	extra := map[string]string{"TMPDIR": sh.tmp, "PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
	sh.policy = sandbox.Policy{Landlock: opts.Mode != ModeFullAccess, Network: opts.Network, DenyRead: s.root.deny}
	if sh.policy.Landlock {
		cache := opts.CacheDir
		if cache == "" {
			dir, err := userdirs.Env{Getenv: lookup(parent)}.Cache()
			if err == nil {
				cache = filepath.Join(dir, "harness", "sandbox-cache")
			}
		}
		if cache != "" {
			if err := os.MkdirAll(filepath.Join(cache, "go-build"), 0o700); err == nil {
				// Caches follow XDG_CACHE_HOME (Go's build cache among them): commands get
				// one they may write, apart from the user's, which they may not.
				extra["XDG_CACHE_HOME"] = cache
				extra["GOCACHE"] = filepath.Join(cache, "go-build")
				sh.policy.Writable = append(sh.policy.Writable, cache)
			}
		}
		// Unless the user's own Go build cache is among the writable directories: then
		// commands share it (and its warmth).
		if gc := userGoCache(parent); gc != "" && opts.Mode == ModeWorkspaceWrite && insideAny(gc, opts.Writable) {
			extra["GOCACHE"] = gc
		}
		sh.policy.Writable = append(sh.policy.Writable, sh.tmp)
		if opts.Mode == ModeWorkspaceWrite {
			sh.policy.Writable = append(sh.policy.Writable, s.root.dir)
			sh.policy.Writable = append(sh.policy.Writable, opts.Writable...)
		}
	}
	sh.env = commandEnv(parent, extra)
	abi := probeABI()
	sh.enforcement = Enforcement{Mode: opts.Mode, Network: opts.Network || opts.Mode == ModeFullAccess, Report: sandbox.Assess(sh.policy, abi)}
	return sh, nil
}

// userGoCache is the Go build cache of the environment parent: its GOCACHE, else
// go-build in its user cache directory, as the go command finds it.
func userGoCache(parent []string) string {
	getenv := lookup(parent)
	if gc := getenv("GOCACHE"); gc != "" && gc != "off" {
		return gc
	}
	if dir, err := (userdirs.Env{Getenv: getenv}).Cache(); err == nil {
		return filepath.Join(dir, "go-build")
	}
	return ""
}

// insideAny reports whether p is one of dirs or below one of them.
func insideAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if within(filepath.Clean(p), filepath.Clean(d)) {
			return true
		}
	}
	return false
}

// probeABI is the kernel's Landlock ABI (a variable for the test of a kernel without one).
var probeABI = sandbox.Probe

// commandEnv is the commands' environment: the parent's without the names that look like
// credentials (the stdio servers' rule, transport.Scrubbed), then extra on top.
func commandEnv(parent []string, extra map[string]string) []string {
	var env []string
	for _, kv := range parent {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || transport.Scrubbed(name) {
			continue
		}
		if _, over := extra[name]; over {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// warning is the line logged at start when the sandbox is not what the mode asks for.
func (sh *shell) warning() string {
	e := sh.enforcement
	switch {
	case sh.bashErr != nil:
		return "workspace: no shell: " + sh.bashErr.Error()
	case e.Mode == ModeFullAccess:
		return ""
	case e.Level == sandbox.LevelNone:
		return "workspace: WARNING: shell commands are not sandboxed: " + e.Why
	case e.Level == sandbox.LevelPartial:
		return "workspace: the sandbox is partial on this kernel: not enforced: " + strings.Join(e.Missing, ", ")
	}
	return ""
}

// close ends the jobs and removes the directories.
func (sh *shell) close() error {
	sh.stopAll()
	return errors.Join(os.RemoveAll(sh.tmp), os.RemoveAll(sh.outDir))
}
