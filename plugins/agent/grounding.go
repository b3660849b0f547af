package agent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/userdirs"
	"github.com/cordisgo/harness/plugins/model"
	"github.com/cordisgo/harness/plugins/ptc"
	"github.com/cordisgo/harness/plugins/sysprompt"
)

// DefaultPreamble is the agent's preamble section unless its configuration replaces it
// ([Config].Preamble): who the model is, where it works and how its tools behave. {{date}}
// (the day, so the prompt's prefix holds all day), {{cwd}} and {{platform}} are filled in.
// In PTC mode [PreamblePTC] follows it.
const DefaultPreamble = `You are the agent of the harness, an assistant that works on the user's tasks with the tools the harness connects: MCP servers' tools and its own. Today is {{date}}. The working directory is {{cwd}}, on {{platform}}.

Tool calls go through permissions: a call runs, waits for the person driving the session to approve it, or is refused. A refused call's result says why; do not repeat it unchanged: change course, or ask the user. When nobody can be asked (a script), calls that need an approval are refused.

Tools of the harness, when you have them:
- tool_search finds tools you do not have yet by what they do; the tools it finds are yours from the next step on. Search before saying a tool is missing.
- read_tool_result reads the rest of a large tool result, of which you got the head and the tail with an id.`

// PreamblePTC ends the default preamble in PTC mode (a standard session's prompt never
// names run_code, which it cannot call).
const PreamblePTC = `- run_code runs a TypeScript program that calls the tools and returns only what you need: write one program for many calls or large data, rather than a call at a time.`

// The orders of the agent's sections: the preamble right after the sysprompt plugin's own
// (sysprompt.OrderPreamble), the project instructions after the agent's prompt (order 0)
// and before the MCP servers' instructions.
const (
	orderPreamble     = sysprompt.OrderPreamble + 100
	orderInstructions = 1000
)

// preamble renders a preamble template, once a day: the text is kept with its day.
//
// A preamble is safe for concurrent use.
type preamble struct {
	tmpl, cwd string
	today     atomic.Pointer[[2]string] // the day and its text
}

// text returns the preamble for the day of now: the template with its variables filled in.
func (p *preamble) text(now time.Time) string {
	day := now.Format(time.DateOnly)
	if t := p.today.Load(); t != nil && t[0] == day {
		return t[1]
	}
	text := strings.NewReplacer("{{date}}", day, "{{cwd}}", p.cwd, "{{platform}}", runtime.GOOS+"/"+runtime.GOARCH).Replace(p.tmpl)
	p.today.Store(&[2]string{day, text})
	return text
}

// InstructionsConfig says which project instructions the main agent reads into its prompt.
//
// InstructionsConfig is a plain value.
type InstructionsConfig struct {
	// File is the instruction files' name (default AGENTS.md); "-" reads none.
	File string `json:"file"`
	// MaxBytes caps what is read of all the files together (default 32768); a file past
	// the cap is cut, with a warning in the log and a note in the prompt.
	MaxBytes int `json:"maxBytes"`
}

// instructionFile is one project instruction file the main agent read (or looks for).
type instructionFile struct {
	path  string // absolute
	title string // how the prompt names it
	name  string // the section's name
	text  string // as read into the prompt ("" when absent)
	stamp fileStamp
}

// instructionFiles returns the instruction files for the working directory cwd, in prompt
// order: the user's (in the harness's configuration directory), then those from the
// repository's root (the nearest directory up from cwd holding .git) down to cwd; only
// cwd's when no repository encloses it. Files that do not exist are listed too: one made
// during a session is appended as context.
func instructionFiles(name, cwd string, env userdirs.Env) []*instructionFile {
	var out []*instructionFile
	if dir, err := env.Config(); err == nil {
		p := filepath.Join(dir, "harness", name)
		out = append(out, &instructionFile{path: p, title: "User instructions", name: "instructions:user"})
	}
	root := cwd
	for d := cwd; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	rel, err := filepath.Rel(root, cwd)
	if err != nil {
		rel = "."
	}
	dirs := []string{root}
	if rel != "." {
		d := root
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			d = filepath.Join(d, part)
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		r, _ := filepath.Rel(root, d)
		out = append(out, &instructionFile{path: filepath.Join(d, name), title: "Project instructions", name: sectionName("instructions:project/" + filepath.ToSlash(r))})
	}
	return out
}

// sectionName makes s a valid section name: characters outside [A-Za-z0-9_:./-] become
// '_', and it is cut at 128 bytes.
func sectionName(s string) string {
	b := []byte(strings.TrimSuffix(s, "/."))
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_:./-", c) >= 0) {
			b[i] = '_'
		}
	}
	if len(b) > 128 {
		b = b[:128]
	}
	return string(b)
}

// readInstructions reads f within budget bytes, returning its text for the prompt ("" when
// the file is absent or empty) and the budget left. A file past the budget is cut, with a
// warning.
func readInstructions(c *ctx.Context, f *instructionFile, budget int) (string, int) {
	b, err := os.ReadFile(f.path)
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		if err != nil && !os.IsNotExist(err) {
			c.Logger().Warn("agent: project instructions not read", "file", f.path, "err", err)
		}
		return "", budget
	}
	text := string(bytes.TrimSpace(b))
	if len(text) > budget {
		c.Logger().Warn("agent: project instructions cut at the size cap (instructions.maxBytes)", "file", f.path, "bytes", len(text), "kept", budget)
		cut := budget
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + fmt.Sprintf("\n\n[cut here: the file has %d bytes, past the cap on project instructions (the agent's instructions.maxBytes)]", len(text))
		budget = 0
	} else {
		budget -= len(text)
	}
	return text, budget
}

// instructionSection is the prompt text of a file read.
func instructionSection(f *instructionFile, text string) string {
	return "# " + f.title + " (" + f.path + ")\n\n" + text
}

// registerGrounding adds the main agent's preamble and its project instructions to the
// prompt of its layer (a subagent's own preamble, when it sets one, shadows the main
// agent's in its layer), from a sub-scope that follows the system prompt service. The
// instructions are read once, here: a file that changes later reaches a session as a
// message (Session.instructionUpdates), so the prompt's prefix stays.
func (d *agentDef) registerGrounding(cwd string) error {
	d.instructions = nil
	if d.name == "" && d.cfg.Instructions.File != "-" {
		d.instructions = instructionFiles(d.cfg.Instructions.File, cwd, userdirs.Env{})
		budget := d.cfg.Instructions.MaxBytes
		for _, f := range d.instructions {
			f.stamp = stamp(f.path) // before the read: a change during it is seen later
			f.text, budget = readInstructions(d.c, f, budget)
		}
	}
	tmpl := DefaultPreamble
	if d.cfg.Preamble != nil {
		tmpl = *d.cfg.Preamble
	}
	_, err := d.c.Inject("agent:grounding", []ctx.Dependency{sysprompt.Key}, func(c *ctx.Context) error {
		ps := sysprompt.Key.Use(c)
		if strings.TrimSpace(tmpl) != "" {
			pre := &preamble{tmpl: tmpl, cwd: cwd}
			if _, err := ps.Register(c, sysprompt.Section{Name: "agent:preamble", Order: orderPreamble,
				Render: func(a *sysprompt.Assembly) (string, error) {
					text := pre.text(time.Now())
					if d.cfg.Preamble == nil && a.Vars[ptc.ModeVar] == ptc.ModePTC {
						text += "\n" + PreamblePTC
					}
					return text, nil
				}}); err != nil {
				return err
			}
		}
		for i, f := range d.instructions {
			if f.text == "" {
				continue
			}
			if _, err := ps.Register(c, sysprompt.Section{Name: f.name, Order: orderInstructions + i, Text: instructionSection(f, f.text)}); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

// instructionUpdates returns a message for the instruction files that changed since the
// session last saw them (their text in the prompt, or in an earlier update), and records
// what it saw; nil when none did. It reads the files only when their size or time changed.
func (s *Session) instructionUpdates(d *agentDef) *model.Message {
	if len(d.instructions) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = make(map[string]seenFile, len(d.instructions))
		for _, f := range d.instructions {
			s.seen[f.path] = seenFile{text: f.text, stamp: f.stamp}
		}
	}
	var b strings.Builder
	budget := d.cfg.Instructions.MaxBytes
	for _, f := range d.instructions {
		st, was := stamp(f.path), s.seen[f.path]
		if st == was.stamp {
			budget -= len(was.text)
			continue
		}
		text, left := readInstructions(d.c, f, max(budget, 0))
		budget = left
		s.seen[f.path] = seenFile{text: text, stamp: st}
		if text == was.text {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("[The project instructions changed during this session; they replace the earlier ones of the same file.]\n\n")
		} else {
			b.WriteString("\n\n")
		}
		if text == "" {
			fmt.Fprintf(&b, "# %s (%s) were removed.", f.title, f.path)
			continue
		}
		b.WriteString(instructionSection(f, text))
	}
	if b.Len() == 0 {
		return nil
	}
	return &model.Message{Role: model.RoleUser, Content: b.String()}
}

// seenFile is what a session last saw of an instruction file.
type seenFile struct {
	text  string
	stamp fileStamp
}

// fileStamp tells a file's versions apart without reading it.
type fileStamp struct {
	size int64
	mod  time.Time
}

func stamp(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{size: -1}
	}
	return fileStamp{size: fi.Size(), mod: fi.ModTime()}
}
