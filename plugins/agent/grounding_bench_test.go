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
	_, sub, cfg := InstructionTree(b, "Be brief.", "Be brief.", "Be brief.")
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

// InstructionTree makes the three places of project instruction files, each with its
// AGENTS.md: a configuration home (cfg, the user's harness/AGENTS.md), a repository (repo,
// with .git) and its subdirectory svc (sub). The texts are the user's, the repository
// root's and the subdirectory's. Exported for the package's external tests.
func InstructionTree(tb testing.TB, user, root, svc string) (repo, sub, cfg string) {
	tb.Helper()
	repo, cfg = tb.TempDir(), tb.TempDir()
	sub = filepath.Join(repo, "svc")
	for _, d := range []string{filepath.Join(repo, ".git"), sub, filepath.Join(cfg, "harness")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	for path, text := range map[string]string{filepath.Join(cfg, "harness", "AGENTS.md"): user, filepath.Join(repo, "AGENTS.md"): root, filepath.Join(sub, "AGENTS.md"): svc} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return repo, sub, cfg
}
