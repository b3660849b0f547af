//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/internal/loopback"
	"github.com/cordisgo/harness/internal/procfs"
)

// manySessions measures one `harness serve` holding n downstream sessions (issue 39 item
// 9): the gateway process's resident memory before and after the sessions open (each has
// initialized, made one call and holds its standalone stream, the go-sdk client's way), per
// idle session; then the latency of calls with every session calling at once (n in flight),
// and with 16 calls in flight spread over the sessions. The client is this process.
func manySessions(args []string) error {
	fs := flag.NewFlagSet("sessions", flag.ExitOnError)
	harness := fs.String("harness", "", "path of the harness binary")
	n := fs.Int("n", 1000, "downstream sessions")
	rounds := fs.Int("rounds", 5, "calls per session with every session calling at once")
	calls16 := fs.Int("calls16", 5000, "calls with 16 in flight, spread over the sessions")
	_ = fs.Parse(args)
	if *harness == "" {
		return errors.New("-harness is required")
	}
	tmp, err := os.MkdirTemp("", "gwbench-sessions")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	port, err := loopback.FreePort()
	if err != nil {
		return err
	}
	cmd := exec.Command(*harness, "-p", "default", "serve", "--addr", "127.0.0.1:"+strconv.Itoa(port),
		"--endpoint-file", filepath.Join(tmp, "gw.json"), "--set", "plugins.remote.enabled=false")
	cmd.Env = append(os.Environ(), "HARNESS_GATEWAY_TOKEN=bench-token", "HOME="+tmp,
		"XDG_CONFIG_HOME="+filepath.Join(tmp, ".config"), "XDG_STATE_HOME="+filepath.Join(tmp, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(tmp, ".cache"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"
	const tok, tool = "bench-token", "demo__echo"
	if err := waitReady(url, tok, tool); err != nil {
		return err
	}
	cx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// One session warms the gateway up (the fleet, the route, the runtime's pools).
	warm, err := dial(cx, url, tok)
	if err != nil {
		return err
	}
	for range 200 {
		if _, err := warm.CallTool(cx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "w"}}); err != nil {
			return err
		}
	}
	before := rssKB(cmd.Process.Pid)
	css := make([]*mcp.ClientSession, *n)
	opened := time.Now()
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, 32) // open 32 at a time
	for i := range css {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cs, err := dial(cx, url, tok)
			if err == nil {
				_, err = cs.CallTool(cx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "s"}})
			}
			if err != nil {
				errMu.Lock()
				firstErr = errors.Join(firstErr, err)
				errMu.Unlock()
				return
			}
			css[i] = cs
		})
	}
	wg.Wait()
	defer func() {
		for _, cs := range css {
			if cs != nil {
				_ = cs.Close()
			}
		}
	}()
	if firstErr != nil {
		return fmt.Errorf("opening the sessions: %w", firstErr)
	}
	openTook := time.Since(opened)
	// Idle: let the gateway settle (its collector runs on a timer at least every two
	// minutes; a forced read of RSS now would count garbage), then read RSS.
	time.Sleep(5 * time.Second) //nolint:forbidigo // a benchmark letting the gateway idle, not a test waiting for state
	after := rssKB(cmd.Process.Pid)

	// Every session calls at once, rounds times.
	var lat []time.Duration
	var latMu sync.Mutex
	// call makes one call on cs and records how long it took in *into (and its error).
	call := func(cs *mcp.ClientSession, text string, into *[]time.Duration) {
		t := time.Now()
		_, err := cs.CallTool(cx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": text}})
		d := time.Since(t)
		latMu.Lock()
		defer latMu.Unlock()
		if err != nil {
			firstErr = errors.Join(firstErr, err)
		}
		*into = append(*into, d)
	}
	began := time.Now()
	for range *rounds {
		for _, cs := range css {
			wg.Go(func() { call(cs, "x", &lat) })
		}
		wg.Wait()
	}
	allTook := time.Since(began)
	if firstErr != nil {
		return fmt.Errorf("calls: %w", firstErr)
	}
	// 16 in flight, spread over the sessions.
	var lat16 []time.Duration
	next := 0
	began16 := time.Now()
	for range 16 {
		wg.Go(func() {
			for {
				latMu.Lock()
				i := next
				next++
				latMu.Unlock()
				if i >= *calls16 {
					return
				}
				call(css[i%len(css)], "y", &lat16)
			}
		})
	}
	wg.Wait()
	took16 := time.Since(began16)
	if firstErr != nil {
		return fmt.Errorf("calls at 16: %w", firstErr)
	}
	slices.Sort(lat)
	slices.Sort(lat16)
	pct := func(l []time.Duration, p int) time.Duration { return l[min(len(l)-1, len(l)*p/100)] }
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("| sessions | gateway RSS before | with the sessions open, idle | per idle session | opening (32 at a time) |\n|---:|---:|---:|---:|---:|\n")
	fmt.Printf("| %d | %.1f MiB | %.1f MiB | %.1f KiB | %.1f s |\n\n", *n, float64(before)/1024, float64(after)/1024, float64(after-before)/float64(*n), openTook.Seconds())
	fmt.Printf("| calls | in flight | calls/s | p50 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|---:|\n")
	fmt.Printf("| every session at once, %d rounds | %d | %.0f | %s | %s | %s |\n", *rounds, *n, float64(len(lat))/allTook.Seconds(), ms(pct(lat, 50)), ms(pct(lat, 99)), ms(lat[len(lat)-1]))
	fmt.Printf("| spread over the sessions | 16 | %.0f | %s | %s | %s |\n\n", float64(len(lat16))/took16.Seconds(), ms(pct(lat16, 50)), ms(pct(lat16, 99)), ms(lat16[len(lat16)-1]))
	fmt.Printf("load average at the end: %s", load)
	return nil
}

// rssKB is pid's resident set now, in kB.
func rssKB(pid int) int {
	kb, _ := procfs.StatusKB(pid, "VmRSS")
	return int(kb)
}
