//go:build unix

// Command gwbench measures MCP gateways side by side: the same upstream stdio server (the
// harness demo server, tool echo), the same downstream client (a go-sdk Streamable HTTP
// session), for
//
//   - harness: `harness serve`, aggregated route (/mcp, tool demo__echo) and per-server
//     route (/mcp/servers/demo, tool echo), bearer token on;
//   - floor: a bare go-sdk Streamable HTTP server whose echo handler forwards to the
//     upstream through a bare go-sdk client session (this program, mode "floor");
//   - supergateway (--stateful, streamableHttp) and mcp-proxy, from npm (pinned in
//     package.json here).
//
// For each: calls/s and p50/p99 at concurrency 1 and 16 (one session, concurrent calls;
// medians over rounds, interleaved), the peak RSS of the gateway process tree, and the
// processes it runs with 10 downstream sessions open. bench/gwbench.sh builds and runs it.
// It runs on unix (process groups; the memory and process counts read Linux's /proc).
//
// Usage: gwbench run -harness PATH [-rounds 3] [-calls 2000]
//
//	gwbench sessions -harness PATH [-n 1000] [-rounds 5] [-calls16 5000]   (sessions.go)
//
//	gwbench floor -addr HOST:PORT -- CMD ARGS...
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/loopback"
	"github.com/cordisgo/harness/internal/procfs"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gwbench run|sessions|floor ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "floor":
		err = floor(os.Args[2:])
	case "run":
		err = runAll(os.Args[2:])
	case "sessions":
		err = manySessions(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gwbench:", err)
		os.Exit(1)
	}
}

// floor serves the bare forwarding server until killed.
func floor(args []string) error {
	fs := flag.NewFlagSet("floor", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	_ = fs.Parse(args)
	cmdline := fs.Args()
	if len(cmdline) == 0 {
		return errors.New("floor: the upstream command is required after --")
	}
	pcx := context.Background()
	up := mcp.NewClient(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	cs, err := up.Connect(pcx, &mcp.CommandTransport{Command: exec.Command(cmdline[0], cmdline[1:]...)}, nil)
	if err != nil {
		return err
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(cx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return cs.CallTool(cx, &mcp.CallToolParams{Name: "echo", Arguments: req.Params.Arguments})
		})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	return http.Serve(ln, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
}

type gatewayKind struct {
	name, tool, path string
	start            func(port int) (*exec.Cmd, string, error) // command, token
}

// maxRun bounds the timed part of one load round.
var maxRun = 10 * time.Second

type stats struct {
	rate     float64
	p50, p99 time.Duration
}

type row struct {
	name           string
	c1, c16        []stats
	rssKB, procs   int
	gatewayRSSKB   int
	startErr, note string
}

func runAll(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	harness := fs.String("harness", "", "path of the harness binary")
	rounds := fs.Int("rounds", 3, "rounds per gateway and concurrency")
	calls := fs.Int("calls", 2000, "timed calls per round")
	only := fs.String("only", "", "comma-separated gateways to run (default all)")
	fs.DurationVar(&maxRun, "max", 10*time.Second, "bound on the timed part of one round (a slow gateway makes fewer calls)")
	strict := fs.Bool("strict", false, "fail when a gateway does not start or a round fails (bench/gwbench.sh --smoke)")
	_ = fs.Parse(args)
	if *harness == "" {
		return errors.New("-harness is required")
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, _ := os.Getwd()
	nodeBin, _ := exec.LookPath("node")
	tmp, err := os.MkdirTemp("", "gwbench")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	upstream := []string{*harness, "demo-server"}
	harnessStart := func(port int) (*exec.Cmd, string, error) {
		ep := filepath.Join(tmp, "gw-"+strconv.Itoa(port)+".json")
		cmd := exec.Command(*harness, "-p", "default", "serve", "--addr", "127.0.0.1:"+strconv.Itoa(port), "--endpoint-file", ep)
		// A home of its own for each start: the host's remote API, token and endpoint files
		// never meet the user's, or those of the previous gateway still shutting down.
		home := filepath.Join(tmp, "home-"+strconv.Itoa(port))
		cmd.Env = append(os.Environ(), "HARNESS_GATEWAY_TOKEN=bench-token", "HOME="+home,
			"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
			"XDG_CACHE_HOME="+filepath.Join(home, ".cache"))
		return cmd, "bench-token", nil
	}
	npm := func(rel string, argv ...string) func(int) (*exec.Cmd, string, error) {
		return func(port int) (*exec.Cmd, string, error) {
			entry := filepath.Join(dir, "node_modules", rel)
			if nodeBin == "" {
				return nil, "", errors.New("node is not in PATH")
			}
			if _, err := os.Stat(entry); err != nil {
				return nil, "", fmt.Errorf("%s not installed (npm ci --prefix bench/gwbench)", rel)
			}
			a := []string{entry}
			for _, s := range argv {
				a = append(a, strings.ReplaceAll(s, "PORT", strconv.Itoa(port)))
			}
			return exec.Command(nodeBin, a...), "", nil
		}
	}
	kinds := []gatewayKind{
		{"harness serve /mcp", "demo__echo", "/mcp", harnessStart},
		{"harness serve /mcp/servers/demo", "echo", "/mcp/servers/demo", harnessStart},
		{"floor (bare go-sdk forwarder)", "echo", "/mcp", func(port int) (*exec.Cmd, string, error) {
			return exec.Command(self, append([]string{"floor", "-addr", "127.0.0.1:" + strconv.Itoa(port), "--"}, upstream...)...), "", nil
		}},
		{"supergateway --stateful", "echo", "/mcp", npm("supergateway/dist/index.js", "--stdio", strings.Join(upstream, " "),
			"--outputTransport", "streamableHttp", "--stateful", "--port", "PORT", "--logLevel", "none")},
		{"mcp-proxy", "echo", "/mcp", npm("mcp-proxy/dist/bin/mcp-proxy.mjs", "--port", "PORT", "--host", "127.0.0.1", "--", upstream[0], upstream[1])},
	}
	if *only != "" {
		keep := strings.Split(*only, ",")
		kinds = slices.DeleteFunc(kinds, func(k gatewayKind) bool {
			return !slices.ContainsFunc(keep, func(s string) bool { return strings.Contains(k.name, s) })
		})
	}
	rows := make([]*row, len(kinds))
	type live struct {
		cmd   *exec.Cmd
		url   string
		token string
	}
	lives := make([]*live, len(kinds))
	for i, k := range kinds {
		rows[i] = &row{name: k.name}
		port, err := loopback.FreePort()
		if err != nil {
			return err
		}
		cmd, tok, err := k.start(port)
		if err != nil {
			rows[i].startErr = err.Error()
			continue
		}
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			rows[i].startErr = err.Error()
			continue
		}
		url := "http://127.0.0.1:" + strconv.Itoa(port) + k.path
		l := &live{cmd: cmd, url: url, token: tok}
		lives[i] = l
		defer func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
		}()
		if err := waitReady(url, tok, k.tool); err != nil {
			rows[i].startErr = err.Error()
			lives[i] = nil
		}
	}
	// Interleaved rounds: each round runs every gateway once per concurrency.
	for r := 0; r < *rounds; r++ {
		for _, c := range []int{1, 16} {
			for i, k := range kinds {
				l := lives[i]
				if l == nil {
					continue
				}
				st, err := load(l.url, l.token, k.tool, *calls, c)
				if err != nil {
					rows[i].note = err.Error()
					continue
				}
				if c == 1 {
					rows[i].c1 = append(rows[i].c1, st)
				} else {
					rows[i].c16 = append(rows[i].c16, st)
				}
			}
		}
	}
	for i, k := range kinds {
		if l := lives[i]; l != nil {
			procs, rss, grss, err := sessions(l.url, l.token, k.tool, 10, l.cmd.Process.Pid)
			if err != nil {
				rows[i].note = err.Error()
			}
			rows[i].procs, rows[i].rssKB, rows[i].gatewayRSSKB = procs, rss, grss
		}
	}
	printTable(rows, *rounds, *calls)
	if *strict {
		var failed []string
		for _, r := range rows {
			if r.startErr != "" || r.note != "" {
				failed = append(failed, r.name+": "+r.startErr+r.note)
			}
		}
		if len(failed) > 0 {
			return fmt.Errorf("gateways failed: %s", strings.Join(failed, "; "))
		}
	}
	return nil
}

var httpClient = func(tok string) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: bearerOver{tok: tok, base: t}}
}

type bearerOver struct {
	tok  string
	base http.RoundTripper
}

func (b bearerOver) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.tok != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.tok)
	}
	return b.base.RoundTrip(r)
}

func dial(cx context.Context, url, tok string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "gwbench", Version: "1"}, &mcp.ClientOptions{Logger: slog.New(slog.DiscardHandler)})
	return c.Connect(cx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient(tok)}, nil)
}

// waitReady retries a session and one call until the gateway answers (30 s).
func waitReady(url, tok, tool string) error {
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		cx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cs, err := dial(cx, url, tok)
		if err == nil {
			var res *mcp.CallToolResult
			res, err = cs.CallTool(cx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "ready"}})
			if err == nil && res.IsError {
				err = fmt.Errorf("tool error: %v", res.Content)
			}
			_ = cs.Close()
		}
		cancel()
		if err == nil {
			return nil
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready: %w", url, last)
}

// load makes calls tool calls on one session at concurrency c, after 50 warm-up calls.
func load(url, tok, tool string, calls, c int) (stats, error) {
	cx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cs, err := dial(cx, url, tok)
	if err != nil {
		return stats{}, err
	}
	defer func() { _ = cs.Close() }()
	call := func() error {
		res, err := cs.CallTool(cx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "hello"}})
		if err == nil && res.IsError {
			err = errors.New("tool error")
		}
		return err
	}
	for range 50 {
		if err := call(); err != nil {
			return stats{}, err
		}
	}
	lat := make([]time.Duration, calls)
	var next sync.Mutex
	i := 0
	var firstErr error
	done := 0
	var wg sync.WaitGroup
	began := time.Now()
	for range c {
		wg.Go(func() {
			for {
				next.Lock()
				n := i
				i++
				if n < calls && time.Since(began) > maxRun {
					i = calls // out of time: the calls made so far are the sample
					n = calls
				}
				if n < calls {
					done++
				}
				next.Unlock()
				if n >= calls {
					return
				}
				t := time.Now()
				if err := call(); err != nil {
					next.Lock()
					firstErr = err
					i = calls
					next.Unlock()
					return
				}
				lat[n] = time.Since(t)
			}
		})
	}
	wg.Wait()
	took := time.Since(began)
	if firstErr != nil {
		return stats{}, firstErr
	}
	lat = slices.DeleteFunc(lat, func(d time.Duration) bool { return d == 0 })
	if len(lat) == 0 {
		return stats{}, errors.New("no call completed")
	}
	slices.Sort(lat)
	return stats{rate: float64(done) / took.Seconds(), p50: lat[len(lat)/2], p99: lat[len(lat)*99/100]}, nil
}

// sessions opens n sessions (one call each), then counts the processes of the gateway's
// tree and sums their peak RSS.
func sessions(url, tok, tool string, n, pid int) (procs, rssKB, gatewayKB int, err error) {
	cx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var css []*mcp.ClientSession
	defer func() {
		for _, cs := range css {
			_ = cs.Close()
		}
	}()
	for range n {
		cs, err := dial(cx, url, tok)
		if err != nil {
			return 0, 0, 0, err
		}
		css = append(css, cs)
		if _, err := cs.CallTool(cx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "s"}}); err != nil {
			return 0, 0, 0, err
		}
	}
	tree := descendants(pid)
	for _, p := range tree {
		rssKB += hwm(p)
	}
	return len(tree), rssKB, hwm(pid), nil
}

// descendants returns pid and every process below it.
func descendants(pid int) []int {
	all, _ := procfs.List()
	out := []int{pid}
	for _, p := range procfs.Descendants(all, pid) {
		out = append(out, p.PID)
	}
	return out
}

// hwm is the peak resident set of pid in kB (0 once it is gone).
func hwm(pid int) int {
	kb, _ := procfs.StatusKB(pid, "VmHWM")
	return int(kb)
}

func median(ss []stats) stats {
	if len(ss) == 0 {
		return stats{}
	}
	pick := func(f func(stats) float64) float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return stats{
		rate: pick(func(s stats) float64 { return s.rate }),
		p50:  time.Duration(pick(func(s stats) float64 { return float64(s.p50) })),
		p99:  time.Duration(pick(func(s stats) float64 { return float64(s.p99) })),
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

func printTable(rows []*row, rounds, calls int) {
	fmt.Printf("gateways: %d rounds of %d calls per concurrency (medians), one session, tool echo of the harness demo server over stdio; %s/%s, %d CPUs\n\n",
		rounds, calls, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Println("| gateway | calls/s c=1 | p50 / p99 ms c=1 | calls/s c=16 | p50 / p99 ms c=16 | peak RSS, tree (gateway) MiB | processes, 10 sessions |")
	fmt.Println("|---|---|---|---|---|---|---|")
	var bestNPM1, bestNPM16, floor1, floor16 float64
	var harness1, harness16 float64
	for _, r := range rows {
		if r.startErr != "" {
			fmt.Printf("| %s | not run: %s | | | | | |\n", r.name, r.startErr)
			continue
		}
		a, b := median(r.c1), median(r.c16)
		fmt.Printf("| %s | %.0f | %s / %s | %.0f | %s / %s | %.1f (%.1f) | %d |\n", r.name, a.rate, ms(a.p50), ms(a.p99), b.rate, ms(b.p50), ms(b.p99),
			float64(r.rssKB)/1024, float64(r.gatewayRSSKB)/1024, r.procs)
		switch {
		case strings.HasPrefix(r.name, "supergateway"), strings.HasPrefix(r.name, "mcp-proxy"):
			bestNPM1, bestNPM16 = max(bestNPM1, a.rate), max(bestNPM16, b.rate)
		case strings.HasPrefix(r.name, "floor"):
			floor1, floor16 = a.rate, b.rate
		case r.name == "harness serve /mcp":
			harness1, harness16 = a.rate, b.rate
		}
		if r.note != "" {
			fmt.Printf("|  ↳ %s | | | | | | |\n", r.note)
		}
	}
	fmt.Println()
	if bestNPM1 > 0 {
		fmt.Printf("harness /mcp vs the faster npm gateway: %.2fx at c=1, %.2fx at c=16 (goal ≥ 2x)\n", harness1/bestNPM1, harness16/bestNPM16)
	}
	if floor1 > 0 {
		fmt.Printf("harness /mcp vs the floor: %.0f%% at c=1, %.0f%% at c=16 (goal ≥ 80%%)\n", 100*harness1/floor1, 100*harness16/floor16)
	}
}
