package demoserver

import (
	"context"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultName is the implementation name a server reports when
// [Options.Name] is empty.
const DefaultName = "harness-demo"

// DefaultInstructions are the server instructions used when
// [Options.Instructions] is empty.
const DefaultInstructions = "The harness demo server offers small tools for trying an MCP host: " +
	"echo returns its text, add sums two numbers (with structured output), " +
	"slow waits a number of milliseconds and reports progress, image returns a small PNG, " +
	"fail always returns a tool error, add_tool registers a new tool at run time, " +
	"big returns a text of a requested size, and ask asks the user a question (elicitation). " +
	"Resources: demo://readme, demo://config.json, demo://logo.png, and notes at demo://notes/{id}."

// version is the implementation version reported to clients.
const version = "0.1.0"

// Options configures a demo server. The zero value is ready to use.
//
// Options is a plain value: New and the Serve functions copy it and never
// retain or modify the caller's copy.
type Options struct {
	// Name is the server implementation name reported to clients.
	// Empty means [DefaultName].
	Name string
	// PageSize is the maximum number of items in one page of tools/list,
	// resources/list and resources/templates/list. Zero (or a negative value)
	// means the SDK default ([mcp.DefaultPageSize]); tests use 2 to exercise
	// pagination.
	PageSize int
	// Instructions are the server instructions sent to clients.
	// Empty means [DefaultInstructions].
	Instructions string
	// Logger receives the server's and the SDK's log records. Nil discards
	// them.
	Logger *slog.Logger
	// Hostile makes a misbehaving server, for tests of terminal safety: HostileText in its
	// version and instructions, and the tool hostile (see HostileText).
	Hostile bool
	// StartDelay makes a server slow to start, for tests of start-up waits and of signals
	// during start-up: ServeIO and ServeHTTP wait this long before serving, and return nil
	// if cx ends first.
	StartDelay time.Duration
}

// started waits o.StartDelay, and reports whether cx is still going after it.
func (o Options) started(cx context.Context) bool {
	if o.StartDelay <= 0 {
		return true
	}
	t := time.NewTimer(o.StartDelay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-cx.Done():
		return false
	}
}

// withDefaults returns o with every empty field replaced by its default.
func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.PageSize < 0 {
		o.PageSize = 0
	}
	if o.Instructions == "" {
		o.Instructions = DefaultInstructions
	}
	if o.Hostile {
		o.Instructions += "\n" + HostileText
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// schemaCache is shared by every demo server so that New, which tests and the
// HTTP handler call often, does not repeat schema reflection and resolution.
var schemaCache = mcp.NewSchemaCache()

// New returns a fresh server with every demo tool, resource and resource
// template registered and the instructions set.
//
// The server is an ordinary *mcp.Server: connect it to any transport with
// Connect or Run. It is safe for concurrent use by any number of sessions;
// tools added by add_tool are shared by all sessions of this server and by no
// other server.
func New(opts Options) *mcp.Server {
	return newServer(opts.withDefaults(), nil)
}

// newServer builds a server from opts, which must have its defaults applied.
// When stop is closed, running slow calls end early so that closing sessions
// (which waits for in-flight requests) cannot be held up by them; a nil stop
// never closes.
func newServer(opts Options, stop <-chan struct{}) *mcp.Server {
	impl := &mcp.Implementation{Name: opts.Name, Title: "Harness demo server", Version: version}
	if opts.Hostile {
		impl.Version += HostileText
	}
	s := mcp.NewServer(impl, &mcp.ServerOptions{
		Instructions: opts.Instructions,
		Logger:       opts.Logger,
		PageSize:     opts.PageSize,
		SchemaCache:  schemaCache,
		// The prompts' and the notes template's argument completions.
		CompletionHandler: complete,
		// Subscriptions (resources/subscribe) of demo://config.json, the resource that
		// changes: the SDK keeps them per session; add_tool updates it, and its
		// subscribers get notifications/resources/updated.
		SubscribeHandler:   subscribe,
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	d := &demo{
		server:   s,
		name:     opts.Name,
		logger:   opts.Logger.With(slog.String("server", opts.Name)),
		stop:     stop,
		extras:   make(map[string]struct{}),
		pageSize: opts.PageSize,
	}
	d.addTools()
	if opts.Hostile {
		d.addHostile()
	}
	d.addResources()
	d.addPrompts()
	return s
}
