package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/cordisgo/harness/bench/mcpbench"
	"github.com/cordisgo/harness/plugins/toolregistry"
)

// callsResult is the JSON line of `mcpbench calls`; bench/ts/calls.mjs prints the same
// fields for the TypeScript client.
type callsResult struct {
	Kind     string `json:"kind"` // "calls"
	Client   string `json:"client"`
	Protocol string `json:"protocol"`
	mcpbench.Stats
	// ClientCPUUsPerCall is this process's processor time (user + system) during the timed
	// calls, divided by their number: what the client itself costs per call.
	ClientCPUUsPerCall float64 `json:"clientCPUUsPerCall"`
	mcpbench.Memory
}

func runCalls(cx context.Context, args []string) error {
	fs := newHarnessFlags("calls", "the harness binary; `PATH demo-server` is the server")
	client := fs.String("client", mcpbench.ClientHarness, "client: harness (Registry.Execute through mcpclient, with the binary's GC and GOMAXPROCS policies), harness-gogc100 (the same with Go's defaults) or gosdk (bare ClientSession.CallTool)")
	conc := fs.Int("c", 1, "concurrent calls")
	n := fs.Int("n", 5000, "timed calls")
	warmup := fs.Int("warmup", 500, "untimed calls first")
	maxSeconds := fs.Float64("max-seconds", 60, "stop starting calls after this many seconds of the timed part")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the timed part to `FILE`")
	history := fs.Int("history", -1, "harness only: the registry's historySize (-1: its default)")
	stall := fs.Duration("stall", 0, "diagnose a call in flight for longer than this: dump the client's goroutines and SIGQUIT the server (0: off)")
	serverStderr := fs.String("server-stderr", "", "append the server's stderr to `FILE` (for -stall's server dump)")
	harness, err := fs.parse(args)
	if err != nil {
		return err
	}
	if *client == mcpbench.ClientHarness {
		defer asTheBinary()()
	}
	server := mcpbench.HarnessServer(harness)
	if *serverStderr != "" {
		server = serverWithStderr(server, *serverStderr)
	}
	connectcx, cancel := context.WithTimeout(cx, time.Minute)
	var c mcpbench.Client
	if *client != mcpbench.ClientGoSDK && *history >= 0 {
		var o toolregistry.Config
		o.Default()
		o.HistorySize = *history
		c, err = mcpbench.DialHarness(connectcx, server, &o)
	} else {
		c, err = mcpbench.Dial(connectcx, *client, server)
	}
	cancel()
	if err != nil {
		return err
	}
	call := c.Call
	if *stall > 0 {
		w := &stallWatch{after: *stall}
		var stop func()
		call, stop = w.wrap(call)
		defer stop()
	}
	res, err := measureCalls(cx, c, call, *client, *conc, *n, *warmup, *maxSeconds, *cpuprofile)
	if cerr := c.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	if err != nil {
		return err
	}
	return emit(res)
}

func measureCalls(cx context.Context, c mcpbench.Client, call func(context.Context) error, name string, conc, n, warmup int, maxSeconds float64, cpuprofile string) (callsResult, error) {
	if warmup > 0 {
		if _, err := mcpbench.Drive(cx, mcpbench.Load{Calls: warmup, Concurrency: conc}, call); err != nil {
			return callsResult{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return callsResult{}, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			_ = f.Close() // nothing was written
			return callsResult{}, err
		}
		defer func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "mcpbench: cpu profile:", err)
			}
		}()
	}
	before := mcpbench.ReadCPU()
	st, err := mcpbench.Drive(cx, mcpbench.Load{
		Calls:       n,
		Concurrency: conc,
		MaxDuration: time.Duration(maxSeconds * float64(time.Second)),
	}, call)
	if err != nil {
		return callsResult{}, err
	}
	cpu := mcpbench.ReadCPU().Sub(before)
	mem, err := mcpbench.ReadMemory(0)
	if err != nil {
		return callsResult{}, err
	}
	return callsResult{
		Kind:               "calls",
		Client:             name,
		Protocol:           c.Protocol(),
		Stats:              st,
		ClientCPUUsPerCall: float64(cpu.Self.Microseconds()) / float64(max(st.Calls, 1)),
		Memory:             mem,
	}, nil
}
