// Command mcpbench runs one measurement of the MCP client comparison (see package
// github.com/cordisgo/harness/bench/mcpbench) and prints its result as one JSON line on
// stdout; `mcpbench table` turns the collected lines into the markdown table of
// docs/performance.md. bench/mcpbench.sh runs everything.
//
//	mcpbench calls   -client harness|gosdk -harness PATH [-c 16] [-n 20000] [-warmup 500] [-history N] [-cpuprofile F]
//	mcpbench rss     -harness PATH -servers N
//	mcpbench rss-run -harness PATH -servers N
//	mcpbench startup -harness PATH [-servers 20] [-rounds 7]
//	mcpbench table   [-load-start "1.0 …"] [-load-end "…"] [-gobench FILE] < results.jsonl
//
// -harness names the harness binary: its `demo-server` command is the server of every
// measurement, and rss-run runs it as the host.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/cordisgo/harness/internal/gcpolicy"
	"github.com/cordisgo/harness/internal/procpolicy"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	cx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "calls":
		err = runCalls(cx, args)
	case "rss":
		err = runRSS(cx, args)
	case "rss-run":
		err = runRSSRun(cx, args)
	case "startup":
		err = runStartup(cx, args)
	case "table":
		err = runTable(args, os.Stdin, os.Stdout)
	case "-h", "-help", "--help", "help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "mcpbench: unknown command %q\n", cmd)
		usage()
		os.Exit(2)
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: mcpbench <command> [flags]

commands:
  calls    tool-call throughput and latency of one client (harness or gosdk)
  rss      peak RSS of a host process (ctx + toolregistry + mcpclient) with N servers
  rss-run  peak RSS of the harness binary (harness -p cli --stdio … run) with N servers
  startup  wall time until the tools of N servers are registered (parallel, sequential, one)
  table    read the JSON lines of the others on stdin and print the markdown table

Run "mcpbench <command> -h" for its flags.
`)
}

// emit prints v as one JSON line on stdout.
func emit(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Println(string(b))
	return err
}

// harnessFlags is the flag set of a measurement, with the -harness flag every one takes.
type harnessFlags struct {
	*flag.FlagSet
	harness *string
}

// newHarnessFlags returns the flag set of the command name, its -harness flag described by
// usage.
func newHarnessFlags(name, usage string) harnessFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	return harnessFlags{FlagSet: fs, harness: fs.String("harness", "", usage)}
}

// parse parses args and returns the checked -harness path.
func (f harnessFlags) parse(args []string) (string, error) {
	if err := f.Parse(args); err != nil {
		return "", err
	}
	return *f.harness, needHarness(*f.harness)
}

// asTheBinary runs this process with the harness binary's runtime policies (its GC and
// GOMAXPROCS) and returns what restores Go's defaults.
func asTheBinary() (restore func()) {
	gc := gcpolicy.Start()
	undo := procpolicy.Apply()
	return func() {
		undo()
		gc.Stop()
	}
}

// needHarness checks the -harness flag.
func needHarness(path string) error {
	if path == "" {
		return errors.New("-harness PATH (the harness binary) is required")
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("-harness: %w", err)
	}
	return nil
}
