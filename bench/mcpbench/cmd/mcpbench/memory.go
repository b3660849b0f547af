package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/cordisgo/harness/bench/mcpbench"
)

// rssResult is the JSON line of `mcpbench rss` and `mcpbench rss-run`; bench/ts/calls.mjs
// --rss prints the same fields for the TypeScript client.
type rssResult struct {
	Kind    string `json:"kind"` // "rss"
	Client  string `json:"client"`
	Host    string `json:"host"` // what was measured
	Servers int    `json:"servers"`
	mcpbench.Memory
}

// runRSS mounts N servers in this process, waits until all are connected and their tools
// registered, and reports this process's own peak RSS (the servers are other processes).
func runRSS(cx context.Context, args []string) error {
	fs := newHarnessFlags("rss", "the harness binary; `PATH demo-server` is the server")
	servers := fs.Int("servers", 1, "how many stdio servers to connect")
	harness, err := fs.parse(args)
	if err != nil {
		return err
	}
	defer asTheBinary()() // the host runs as the harness binary does
	waitcx, cancel := context.WithTimeout(cx, 2*time.Minute)
	defer cancel()
	h, err := mcpbench.NewHost(waitcx, mcpbench.Logger())
	if err != nil {
		return err
	}
	err = h.MountAll(waitcx, *servers, true, mcpbench.HarnessServer(harness))
	var mem mcpbench.Memory
	if err == nil {
		mem, err = mcpbench.ReadMemory(0)
	}
	if cerr := h.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	if err != nil {
		return err
	}
	return emit(rssResult{Kind: "rss", Client: mcpbench.ClientHarness, Host: "ctx+toolregistry+mcpclient", Servers: *servers, Memory: mem})
}

// ready is the log message `harness run` writes once every plugin has started.
const ready = "running; interrupt to stop"

// connected is in the status line of one server's successful connection
// ("s00: connected (8 tools)"). bench/mcpbench.sh --smoke, run by .ci/run, fails when the
// wording changes.
const connected = ": connected ("

// runRSSRun runs the harness binary as the host (`harness -p cli --stdio sNN=… run`),
// waits until it says it is running with every server connected, reads its peak RSS from
// /proc and interrupts it.
func runRSSRun(cx context.Context, args []string) error {
	fs := newHarnessFlags("rss-run", "the harness binary: the host, and `PATH demo-server` is the server")
	servers := fs.Int("servers", 1, "how many stdio servers to connect")
	harness, err := fs.parse(args)
	if err != nil {
		return err
	}
	if strings.ContainsAny(harness, " \t\n'\"\\") {
		return errors.New("-harness: the path must not need quoting (it is passed in a --stdio command line)")
	}
	argv := []string{"-p", "cli", "--log-level", "info"}
	for i := range *servers {
		argv = append(argv, "--stdio", mcpbench.ServerName(i)+"="+harness+" demo-server")
	}
	argv = append(argv, "run")
	cmd := exec.Command(harness, argv...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	var waitErr error // set before exited is closed
	exited := make(chan struct{})
	found := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		n := 0
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, connected) {
				n++
			}
			if strings.Contains(line, ready) {
				found <- n
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr) // keep the host from blocking on a full pipe
		waitErr = cmd.Wait()
		close(exited)
	}()

	var mem mcpbench.Memory
	select {
	case n := <-found:
		mem, err = mcpbench.ReadMemory(cmd.Process.Pid)
		if err == nil && n != *servers {
			err = fmt.Errorf("harness run reported %d connected servers, want %d", n, *servers)
		}
	case <-exited:
		return fmt.Errorf("harness run exited before it was running: %w", waitErr)
	case <-time.After(2 * time.Minute):
		err = errors.New("harness run did not report running within 2 minutes")
	case <-cx.Done():
		err = cx.Err()
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-exited: // its exit status after SIGINT is not what is measured
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		if err == nil {
			err = errors.New("harness run did not stop within 30 s of SIGINT")
		}
	}
	if err != nil {
		return err
	}
	return emit(rssResult{Kind: "rss", Client: mcpbench.ClientHarness, Host: "harness run", Servers: *servers, Memory: mem})
}
