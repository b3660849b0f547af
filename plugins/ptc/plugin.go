package ptc

import (
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/plugins/sysprompt"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// Key is the PTC service: the [Runner] of the scope's tools.
var Key = ctx.NewKey[*Runner]("ptc")

// Plugin provides the PTC service ([Key]) and, while a systemPrompt service is mounted, the
// declarations section ([SectionName]). Its configuration is [Config]; a change restarts it.
var Plugin = ctx.Define(ctx.Meta{Name: "ptc", Inject: []ctx.Dependency{toolregistry.Key}}, apply)

// SectionName is the name of the system prompt section with the declarations.
const SectionName = "ptc:declarations"

// SectionOrder places the section after the MCP servers' instructions.
const SectionOrder = sysprompt.OrderMCPServers + 100

// ModeVar is the assembly variable that turns the section on: the section renders only in
// assemblies whose Vars[ModeVar] is [ModePTC], so an agent that offers both modes assembles
// one prompt per mode from the same sections.
const ModeVar = "agent.mode"

// The modes of an agent.
const (
	ModeStandard = "standard"
	ModePTC      = "ptc"
)

func apply(c *ctx.Context, cfg Config) error {
	reg := toolregistry.Key.Use(c)
	r, err := New(reg, Options{Limits: cfg.Limits, Logger: c.Logger()})
	if err != nil {
		return err
	}
	d := &declSection{reg: reg, cfg: cfg, cache: map[*ctx.Scope]string{}}
	if _, err := toolregistry.Changed.On(c, func(toolregistry.Change) error {
		d.version.Add(1)
		return nil
	}); err != nil {
		return err
	}
	if _, err := c.Inject("ptc-prompt", []ctx.Dependency{sysprompt.Key}, func(pc *ctx.Context) error {
		_, err := sysprompt.Key.Use(pc).Register(pc, sysprompt.Section{Name: SectionName, Order: SectionOrder, Render: d.render})
		return err
	}); err != nil {
		return err
	}
	_, err = Key.Provide(c, r)
	return err
}

// declSection renders the declarations section, cached per scope until the registry
// changes.
type declSection struct {
	reg     *toolregistry.Registry
	cfg     Config
	version atomic.Uint64 // bumped by every tools/changed event

	mu     sync.Mutex
	cached uint64 // the version cache holds
	cache  map[*ctx.Scope]string
}

func (d *declSection) render(a *sysprompt.Assembly) (string, error) {
	if a.Vars[ModeVar] != ModePTC || a.Caller == nil {
		return "", nil
	}
	s := a.Caller.Scope()
	v := d.version.Load()
	d.mu.Lock()
	if d.cached == v {
		if text, ok := d.cache[s]; ok {
			d.mu.Unlock()
			return text, nil
		}
	} else {
		clear(d.cache)
		d.cached = v
	}
	d.mu.Unlock()
	text := SectionText(d.reg.List(a.Caller), d.cfg)
	d.mu.Lock()
	if d.cached == v {
		d.cache[s] = text
	}
	d.mu.Unlock()
	return text, nil
}

// SectionText is the system prompt section of PTC mode for tools: how to write a program,
// the limits, and the tools' catalog ([Catalog], within cfg.CatalogBytes). With no tools
// it is "".
func SectionText(tools []toolregistry.Info, cfg Config) string {
	catalog := Catalog(tools, cfg.CatalogBytes)
	if catalog == "" {
		return ""
	}
	l := cfg.Limits
	return "## Programs (run_code)\n\n" +
		"You call tools by writing a TypeScript program and running it with the run_code tool: " +
		`{"code": "<the program>", "description": "<a short label for people>"}. ` +
		"The code is the body of an async function: it may await tool calls and must return a value. " +
		"Only the JSON of the returned value and the lines written with console.log reach you; " +
		"the tools' results stay inside the program, so filter, join and summarise them there and return only what matters. " +
		"Calls started together (Promise.all) overlap when the tools are read-only. " +
		"A failed call rejects with a ToolCallError (tool, code, message); a thrown error is reported with its line. " +
		"There are no modules (import, require), no file system, network or process, and no timers but sleep. " +
		"Limits per run: " + strconv.Itoa(l.MaxToolCalls) + " tool calls, " +
		strconv.Itoa(l.MaxOutputBytes) + " bytes of output (return value and console), " +
		strconv.Itoa(l.CPUTimeMs/1000) + " s of computation, " + strconv.Itoa(l.WallTimeMs/1000) + " s in all.\n\n" +
		"The tools in brief, as TypeScript (each call resolves to a ToolResult). When you need more of a tool than its line says " +
		"(what its parameters mean, the type of its result), run a program that returns describe(\"<name>\") first.\n\n```ts\n" + catalog + "```"
}
