// Command grepbench times the workspace server's grep tool side by side with ripgrep and
// GNU grep over a copy of the Go standard library's source ($(go env GOROOT)/src), on the
// same patterns, and prints a markdown table: the median wall time of each (warm page
// cache; the tools take turns round by round), the ratios, and the matching lines each counted.
//
// The workspace's grep is called as a client calls it: through the MCP server (an in-memory
// connection), output "count" (a line per matching file, every file searched). ripgrep runs
// as rg -c, GNU grep as grep -rcI (binary files skipped, as the other two skip them).
//
// Usage: go run ./bench/grepbench [-rounds 5] [-smoke]  (bench/grepbench.sh installs ripgrep)
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/workspace"
)

// pattern is one search: the pattern in each tool's syntax.
type pattern struct {
	name       string
	expr       string // Go RE2 and ripgrep
	grepExpr   string // GNU grep -E
	ignoreCase bool
}

var patterns = []pattern{
	{"literal, rare", "ErrUnexpectedEOF", "ErrUnexpectedEOF", false},
	{"literal, common", "return nil", "return nil", false},
	{"regexp with a literal", `func \w+Error\(`, `func \w+Error\(`, false},
	{"regexp without a literal", `[A-Z][a-z]+[0-9]{3}\b`, `[A-Z][a-z]+[0-9]{3}\b`, false},
	{"case-insensitive", "content-length", "content-length", true},
	{"no match", "zqxjv_nowhere_zqxjv", "zqxjv_nowhere_zqxjv", false},
}

func main() {
	rounds := flag.Int("rounds", 5, "timed runs of each tool on each pattern (the median is shown)")
	smoke := flag.Bool("smoke", false, "CI: one pattern, one round, the workspace's grep only unless ripgrep is there")
	flag.Parse()
	if err := run(*rounds, *smoke); err != nil {
		fmt.Fprintln(os.Stderr, "grepbench:", err)
		os.Exit(1)
	}
}

func run(rounds int, smoke bool) error {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %w", err)
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	tmp, err := os.MkdirTemp("", "grepbench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	tree := filepath.Join(tmp, "src")
	fmt.Fprintf(os.Stderr, "grepbench: copying %s\n", src)
	files, size, err := copyTree(src, tree)
	if err != nil {
		return err
	}
	pats := patterns
	if smoke {
		pats, rounds = pats[:1], 1
	}
	ws, err := workspace.New(workspace.Options{Root: tree, Mode: workspace.ModeReadOnly})
	if err != nil {
		return err
	}
	defer func() { _ = ws.Close() }()
	st, ct := mcp.NewInMemoryTransports()
	cx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = ws.MCP().Run(cx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "grepbench", Version: "1"}, nil).Connect(cx, ct, nil)
	if err != nil {
		return err
	}
	defer func() { _ = cs.Close() }()

	tools := []tool{{"workspace grep", func(p pattern) (int, error) { return workspaceGrep(cx, cs, p) }}}
	for _, t := range []struct {
		name, bin string
		args      func(pattern) []string
	}{
		{"ripgrep", "rg", func(p pattern) []string {
			a := []string{"-c", "--no-messages"}
			if p.ignoreCase {
				a = append(a, "-i")
			}
			return append(a, "-e", p.expr, tree)
		}},
		{"GNU grep", "grep", func(p pattern) []string {
			a := []string{"-rcIE", "--no-messages"}
			if p.ignoreCase {
				a = append(a, "-i")
			}
			return append(a, "-e", p.grepExpr, tree)
		}},
	} {
		bin, err := exec.LookPath(t.bin)
		if err != nil {
			if smoke {
				continue
			}
			return fmt.Errorf("%s not found: bench/grepbench.sh installs it (apt-get install -y ripgrep)", t.bin)
		}
		args := t.args
		tools = append(tools, tool{t.name, func(p pattern) (int, error) { return external(bin, args(p)) }})
	}

	fmt.Fprintf(os.Stderr, "grepbench: %d files, %d MB; %d rounds per tool and pattern\n", files, size>>20, rounds)
	var b strings.Builder
	b.WriteString("| pattern |")
	for _, t := range tools {
		fmt.Fprintf(&b, " %s (ms) |", t.name)
	}
	for _, t := range tools[1:] {
		fmt.Fprintf(&b, " workspace / %s |", t.name)
	}
	b.WriteString(" matching lines |\n|---|")
	for range len(tools)*2 - 1 {
		b.WriteString("---:|")
	}
	b.WriteString("---|\n")
	for _, p := range pats {
		// The tools take turns, round by round, so that a busy machine slows them alike;
		// the first round warms the page cache and is not counted.
		times := make([][]time.Duration, len(tools))
		counts := make([]string, len(tools))
		for r := range rounds + 1 {
			for i, t := range tools {
				start := time.Now()
				c, err := t.run(p)
				if err != nil {
					return fmt.Errorf("%s, %q: %w", t.name, p.expr, err)
				}
				if r > 0 {
					times[i] = append(times[i], time.Since(start))
				}
				counts[i] = strconv.Itoa(c)
			}
		}
		med := make([]time.Duration, len(tools))
		for i, ts := range times {
			slices.Sort(ts)
			med[i] = ts[len(ts)/2]
		}
		fmt.Fprintf(&b, "| %s `%s` |", p.name, p.expr)
		for _, d := range med {
			fmt.Fprintf(&b, " %.1f |", float64(d)/1e6)
		}
		for _, d := range med[1:] {
			fmt.Fprintf(&b, " %.2f× |", float64(med[0])/float64(d))
		}
		fmt.Fprintf(&b, " %s |\n", strings.Join(counts, " / "))
	}
	fmt.Println(b.String())
	rg, _ := exec.Command("rg", "--version").Output()
	gr, _ := exec.Command("grep", "--version").Output()
	fmt.Printf("Tree: a copy of %s (%d files, %d MB).\n", src, files, size>>20)
	fmt.Printf("Machine: %d CPUs, %s/%s; %s; %s; %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(),
		firstLine(rg), firstLine(gr))
	fmt.Printf("Command: bench/grepbench.sh (go run ./bench/grepbench -rounds %d), %s\n", rounds, time.Now().UTC().Format("2006-01-02"))
	return nil
}

type tool struct {
	name string
	run  func(pattern) (int, error)
}

// workspaceGrep calls the grep tool and sums its counts.
func workspaceGrep(cx context.Context, cs *mcp.ClientSession, p pattern) (int, error) {
	res, err := cs.CallTool(cx, &mcp.CallToolParams{Name: "grep", Arguments: map[string]any{
		"pattern": p.expr, "ignoreCase": p.ignoreCase, "output": "count", "maxResults": 5000}})
	if err != nil {
		return 0, err
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		return 0, fmt.Errorf("tool error: %s", text)
	}
	if strings.Contains(text, "[results cut") {
		return 0, fmt.Errorf("more than 5000 files match %q: the count is incomplete", p.expr)
	}
	return sumCounts([]byte(text)), nil
}

// external runs a grep and sums its per-file counts (exit status 1: no match).
func external(bin string, args []string) (int, error) {
	out, err := exec.Command(bin, args...).Output()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 1 {
		err = nil
	}
	if err != nil {
		return 0, err
	}
	return sumCounts(out), nil
}

// sumCounts adds the N of every "path:N" line.
func sumCounts(out []byte) int {
	total := 0
	for _, l := range bytes.Split(out, []byte("\n")) {
		i := bytes.LastIndexByte(l, ':')
		if i < 0 {
			continue
		}
		n, err := strconv.Atoi(string(l[i+1:]))
		if err == nil {
			total += n
		}
	}
	return total
}

// copyTree copies the regular files and directories of src to dst.
func copyTree(src, dst string) (files int, size int64, err error) {
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			size += int64(len(b))
			return os.WriteFile(target, b, 0o644)
		}
		return nil
	})
	return files, size, err
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if s == "" {
		return "(not installed)"
	}
	return s
}
