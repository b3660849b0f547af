package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/suggest"
	"github.com/cordisgo/harness/permission"
	"github.com/cordisgo/harness/plugins/agent/agentapi"
	"github.com/cordisgo/harness/plugins/agent/session"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/toolregistry"
	"github.com/cordisgo/harness/plugins/toolregistry/deferral"
	"github.com/cordisgo/harness/sampling"
	"github.com/cordisgo/harness/secrets"
	"github.com/cordisgo/harness/toolsearch"
)

// ProfileKey is the name of the profile the tree was mounted from, provided at the root by
// the host: a session's header records it, and a session resumed under another profile
// says so (session.Info.ResumedUnder).
var ProfileKey = ctx.NewKey[string]("profile")

// profileOf returns the profile the agent's tree was mounted from ("" when unknown).
func profileOf(d *agentDef) string {
	name, _ := ProfileKey.Get(d.c)
	return name
}

// Key is the agent service: start, resume and list sessions. The agent plugin mounted at
// the top level of a profile provides it.
var Key = ctx.NewKey[*Service]("agent")

// Plugin is the agent: mounted at the top level it is the main agent and provides [Key];
// mounted on an agent scope's row it makes that scope a subagent of the nearest enclosing
// agent. Its configuration is [Config].
var Plugin = ctx.Define(ctx.Meta{Name: "agent", Inject: []ctx.Dependency{model.Key, toolregistry.Key}}, apply)

// Errors of the service and of sessions, matched with errors.Is.
var (
	// ErrUnknownAgent: no agent of that name is mounted.
	ErrUnknownAgent = errors.New("agent: unknown agent")
	// ErrBusy: the session is running a turn already.
	ErrBusy = errors.New("agent: a turn is running")
	// ErrClosed: the session (or the service) is closed; its log's subscriptions end with
	// the same error.
	ErrClosed = session.ErrClosed
	// ErrCancelled: the turn was cancelled.
	ErrCancelled = agentapi.ErrCancelled
	// ErrNothingToRetry: Retry before the session's first turn.
	ErrNothingToRetry = errors.New("agent: no turn to retry yet")
	// ErrDepth: a subagent would run deeper than the agent's maxDepth.
	ErrDepth = errors.New("agent: delegation too deep")
)

// index holds every mounted agent of a tree by its path, in the root's layer.
var index = ctx.NewTreeLayers[*agentDef]("agents")

// agentDef is one mounted agent plugin: its configuration and the contexts it runs in.
type agentDef struct {
	name string // "" for the root layer's agent, else the layer path ("coder.review")
	// ancestors are the paths of the enclosing layers, nearest first, ending with "".
	ancestors []string
	c         *ctx.Context // the plugin's context: the agent's scope for tools and prompt
	cfg       Config
	models    *model.Service
	tools     *toolregistry.Registry
	svc       *Service // the service of the tree (nil until found)
	subs      *toolregistry.Set
	deferrer  *deferral.Deferrer // chooses the definitions of a request (deferTools)
	// instructions are the main agent's project instruction files, as read at its start.
	instructions []*instructionFile
	// syncing serializes syncSubagents: each run reads the index and replaces the set
	// under it, so the last run always reflects the latest index.
	syncing sync.Mutex
	log     *slog.Logger
}

// layerPath returns the path of layer scope l and of its enclosing layers (nearest first).
func layerPath(l *ctx.Scope) (string, []string) {
	var names []string
	var ancestors []string
	for l.Parent() != nil { // up to the root
		names = append(names, l.Name())
		pc := l.Context()
		if pc == nil {
			break
		}
		l = pc.Layer()
	}
	slices.Reverse(names)
	for i := len(names) - 1; i > 0; i-- {
		ancestors = append(ancestors, strings.Join(names[:i], "."))
	}
	ancestors = append(ancestors, "")
	if len(names) == 0 {
		return "", nil
	}
	return strings.Join(names, "."), ancestors
}

func apply(c *ctx.Context, cfg Config) error {
	name, ancestors := layerPath(c.Layer())
	d := &agentDef{name: name, ancestors: ancestors, c: c, cfg: cfg,
		models: model.Key.Use(c), tools: toolregistry.Key.Use(c), log: c.Logger()}
	if _, err := toolregistry.Policy.On(c, d.policy, ctx.Subtree); err != nil {
		return err
	}
	if cfg.Prompt != "" {
		if err := d.registerPrompt(); err != nil {
			return err
		}
	}
	if name == "" || cfg.Preamble != nil {
		cwd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("agent: the working directory: %w", err)
		}
		if err := d.registerGrounding(cwd); err != nil {
			return err
		}
	}
	if name != "" && (len(cfg.Tools.Allow) > 0 || len(cfg.Tools.Deny) > 0) {
		if _, err := d.tools.Restrict(c, cfg.Tools.Allow, cfg.Tools.Deny); err != nil {
			return fmt.Errorf("tools: %w", err)
		}
	}
	if name != "" {
		// A subagent delegates only to its own subagents: its parent's and siblings' agent
		// tools (inherited from enclosing layers) are hidden from it.
		if _, err := d.tools.Restrict(c, nil, []string{subagentPrefix + "*"}); err != nil {
			return err
		}
	}
	if _, err := d.tools.Register(c, d.readResultTool()); err != nil {
		return err
	}
	if _, err := d.tools.Register(c, d.taskResultTool()); err != nil {
		return err
	}
	do := cfg.DeferTools
	do.Session = func(cx context.Context) (any, bool) { return FromContext(cx) }
	do.Instructions = func(server string) string {
		if src, ok := toolsearch.InstructionsKey.Get(c); ok {
			return src.Instructions(c, server)
		}
		return ""
	}
	d.deferrer = deferral.New(d.tools, do)
	if _, err := d.tools.Register(c, d.deferrer.Tool()); err != nil {
		return err
	}
	if _, err := d.tools.Register(c, d.deferrer.CallTool()); err != nil {
		return err
	}
	if cfg.Sampling != permission.Deny {
		if _, err := sampling.Provide(c, "agent", sampling.Func(d.sample)); err != nil {
			return err
		}
	}
	set, err := d.tools.NewSet(c, "agent:subagents")
	if err != nil {
		return err
	}
	d.subs = set

	if name == "" {
		store, err := openStoreFor(cfg.SessionsDir)
		if err != nil {
			return err
		}
		scrub := secrets.ScrubberOf(c)
		if scrub != nil {
			store = store.WithScrub(scrub.ReplaceJSON)
		}
		svc := &Service{root: c, store: store, scrub: scrub, live: map[string]*Session{}, log: c.Logger()}
		d.svc = svc
		if _, err := Key.Provide(c, svc); err != nil {
			return err
		}
		if _, err := c.Defer("agent:sessions", func(context.Context) error { svc.closeAll(); return nil }); err != nil {
			return err
		}
		if err := exposeRemote(c, svc); err != nil {
			return err
		}
	}
	root := c.Root()
	dispose, err := index.In(c).Add(root, name, d, func() { syncAll(root) })
	if err != nil {
		var dup *ctx.DuplicateError[*agentDef]
		if errors.As(err, &dup) {
			return fmt.Errorf("agent: a second agent plugin in the layer %q (one agent per scope)", name)
		}
		return err
	}
	if _, err := c.Defer("agent:index", dispose); err != nil {
		return err
	}
	// Every agent recomputes its subagent tools now that this one is in the index (an
	// agent that loads at the same time recomputes after its own addition, so one of the
	// two sees the other).
	syncAll(c)
	return nil
}

// syncAll makes every agent of c's tree recompute its subagent tools.
func syncAll(c *ctx.Context) {
	for _, d := range agents(c) {
		d.syncSubagents()
	}
}

// service returns the tree's agent service (the root agent's), or nil.
func (d *agentDef) service() *Service {
	if d.svc != nil {
		return d.svc
	}
	if svc, ok := Key.Get(d.c); ok {
		return svc
	}
	return nil
}

// agents returns every mounted agent of c's tree, by path.
func agents(c *ctx.Context) map[string]*agentDef {
	entries := index.In(c).In(c.Root().Scope())
	out := make(map[string]*agentDef, len(entries))
	for _, e := range entries {
		out[e.Name] = e.Value
	}
	return out
}

// parentOf returns the path of the nearest enclosing agent of d among all, and whether
// there is one.
func (d *agentDef) parentOf(all map[string]*agentDef) (string, bool) {
	for _, a := range d.ancestors {
		if _, ok := all[a]; ok {
			return a, true
		}
	}
	return "", false
}

// subagentPrefix starts the names of subagent tools.
const subagentPrefix = "agent__"

// syncSubagents registers one tool per direct subagent of d.
func (d *agentDef) syncSubagents() {
	d.syncing.Lock()
	defer d.syncing.Unlock()
	if d.c.Err() != nil {
		return
	}
	all := agents(d.c)
	var tools []toolregistry.Tool
	for _, child := range all {
		if d.cfg.MaxDepth == 0 {
			break
		}
		if child == d {
			continue
		}
		if p, ok := child.parentOf(all); !ok || p != d.name {
			continue
		}
		rel := strings.TrimPrefix(child.name, d.name)
		rel = strings.TrimPrefix(rel, ".")
		tools = append(tools, d.subagentTool(child.name, strings.ReplaceAll(rel, ".", "__"), child.cfg.Description))
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	if err := d.subs.Replace(tools); err != nil && !errors.Is(err, toolregistry.ErrClosed) {
		d.log.Warn("agent: subagent tools not registered", "err", err)
	}
}

// Service starts and finds sessions. Provided by the top-level agent plugin under [Key].
//
// A Service is safe for concurrent use.
type Service struct {
	root  *ctx.Context
	store *session.Store
	scrub *secrets.Scrubber // the host's: masks what is stored (nil: nothing)
	log   *slog.Logger

	mu     sync.Mutex
	live   map[string]*Session
	closed bool
}

// Agents lists the mounted agents, by name.
func (s *Service) Agents() []agentapi.AgentInfo {
	all := agents(s.root)
	out := make([]agentapi.AgentInfo, 0, len(all))
	for _, d := range all {
		p, _ := d.parentOf(all)
		if d.name == "" {
			p = ""
		}
		info := agentapi.AgentInfo{Name: d.name, Description: d.cfg.Description, Model: d.cfg.Model, Parent: p, MaxSteps: d.cfg.MaxSteps}
		if err := d.models.Check(d.cfg.Model); err != nil {
			info.ModelProblem = err.Error()
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Store returns the session store.
func (s *Service) Store() *session.Store { return s.store }

// agent returns the mounted agent called name, or an error naming the known ones.
func (s *Service) agent(name string) (*agentDef, error) {
	all := agents(s.root)
	if d, ok := all[name]; ok {
		return d, nil
	}
	names := make([]string, 0, len(all))
	for k := range all {
		if k == "" {
			continue
		}
		names = append(names, k)
	}
	sort.Strings(names)
	if name == "" {
		return nil, fmt.Errorf("%w: no main agent (mount the agent plugin at the top level)", ErrUnknownAgent)
	}
	if hint := suggest.Phrase(suggest.Closest(name, names, suggest.Options{})); hint != "" {
		return nil, fmt.Errorf("%w %q (%s); agents: %v", ErrUnknownAgent, name, hint, names)
	}
	return nil, fmt.Errorf("%w %q; agents: %v", ErrUnknownAgent, name, names)
}

// StartOptions configures a new session. The zero value starts the main agent with its
// configured model, logged, with nobody to ask for approvals.
type StartOptions struct {
	// Agent is the agent's name: "" for the main agent, or an agent scope's path.
	Agent string
	// Model overrides the agent's model (a name of the model service).
	Model string
	// Interactive says a person answers approvals: the session then emits
	// EventApprovalAsked and waits for [Session.Approve]. Without it, calls that need an
	// approval are refused, and the model is told why.
	Interactive bool
	// Ephemeral keeps the session out of the store (no log, results kept in memory).
	Ephemeral bool
	// Mode is the session's mode, "standard" or "ptc"; "" is the agent's default (ptc for
	// an agent whose mode is "ptc", else standard). A mode the agent does not offer is an
	// error.
	Mode string
}

// openStoreFor returns the store of an agent's sessionsDir: "-" keeps sessions in memory,
// "" is [session.DefaultDir].
func openStoreFor(dir string) (*session.Store, error) {
	switch dir {
	case "-":
		return session.OpenStore(""), nil
	case "":
		d, err := session.DefaultDir(nil)
		if err != nil {
			return nil, err
		}
		return session.OpenStore(d), nil
	}
	return session.OpenStore(dir), nil
}

// Start starts a session.
func (s *Service) Start(opts StartOptions) (*Session, error) {
	d, err := s.agent(opts.Agent)
	if err != nil {
		return nil, err
	}
	return s.start(d, opts, nil, 0)
}

// Resume reopens the session id from the store: the history is rebuilt from its log (a
// torn last line is dropped; calls left without a result get an aborted one) and the
// session goes on logging into the same file. opts.Agent is ignored (the log's agent is
// used); opts.Model overrides the model the session was started with. id may be
// [session.Last].
func (s *Service) Resume(id string, opts StartOptions) (*Session, error) {
	id, err := s.store.Resolve(id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if _, ok := s.live[id]; ok {
		s.mu.Unlock()
		return nil, fmt.Errorf("agent: session %s is open already", id)
	}
	s.mu.Unlock()
	events, err := s.store.Read(id)
	if err != nil {
		return nil, err
	}
	h := events[0].Header
	d, err := s.agent(h.Agent)
	if err != nil {
		return nil, err
	}
	if opts.Model == "" {
		opts.Model = h.Model
	}
	return s.resume(d, h, opts)
}

// Lookup returns the open session id.
func (s *Service) Lookup(id string) (*Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.live[id]
	return ss, ok
}

// Open lists the open sessions, oldest first.
func (s *Service) Open() []*Session {
	s.mu.Lock()
	out := make([]*Session, 0, len(s.live))
	for _, ss := range s.live {
		out = append(out, ss)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].header.Created.Before(out[j].header.Created) })
	return out
}

func (s *Service) add(ss *Session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.live[ss.header.ID] = ss
	return nil
}

func (s *Service) remove(ss *Session) {
	s.mu.Lock()
	if s.live[ss.header.ID] == ss {
		delete(s.live, ss.header.ID)
	}
	s.mu.Unlock()
}

func (s *Service) closeAll() {
	s.mu.Lock()
	s.closed = true
	list := make([]*Session, 0, len(s.live))
	for _, ss := range s.live {
		list = append(list, ss)
	}
	s.mu.Unlock()
	for _, ss := range list {
		_ = ss.Close()
	}
}
