package agent

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cordisgo/harness/internal/userdirs"
)

// BenchmarkGroundingPerTurn measures what grounding adds to a turn: the look at the
// project instruction files (the user's, a repository root's and the working directory's,
// none changed) and the preamble's text for the request.
func BenchmarkGroundingPerTurn(b *testing.B) {
	repo := b.TempDir()
	sub := filepath.Join(repo, "svc")
	cfg := b.TempDir()
	for _, d := range []string{filepath.Join(repo, ".git"), sub, filepath.Join(cfg, "harness")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(cfg, "harness", "AGENTS.md"), filepath.Join(repo, "AGENTS.md"), filepath.Join(sub, "AGENTS.md")} {
		if err := os.WriteFile(p, []byte("Be brief."), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	env := userdirs.Env{Getenv: func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	}}
	d := &agentDef{cfg: Config{Instructions: InstructionsConfig{File: "AGENTS.md", MaxBytes: 32 << 10}}, instructions: instructionFiles("AGENTS.md", sub, env)}
	for _, f := range d.instructions {
		f.stamp = stamp(f.path)
	}
	pre := &preamble{tmpl: DefaultPreamble, cwd: sub}
	s := &Session{}
	for b.Loop() {
		if s.instructionUpdates(d) != nil {
			b.Fatal("an update without a change")
		}
		_ = pre.text(time.Now())
	}
}
