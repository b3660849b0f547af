// Command oneshot times a one-shot harness command of two binaries side by side: the same
// command line run by binary A, then by binary B, round after round (so that the machine's
// load falls on both alike), each run a whole process in a home of its own made for the
// benchmark (HOME and XDG_*), in that home. It prints each binary's median and mean wall
// time and the median of the rounds' B/A ratios, the number to read on a busy machine.
//
//	go build -o /tmp/before/harness ./cmd/harness   # on the commit before
//	go build -o /tmp/after/harness ./cmd/harness    # on the commit after
//	go run ./bench/oneshot -a /tmp/before/harness -b /tmp/after/harness -rounds 80 -- mcp list
//
// With -cold the home's cache directory is removed before each run (a first run: no MCP
// catalog cache). The command's output is discarded; a run that fails is reported and ends
// the benchmark.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

func main() {
	a := flag.String("a", "", "the first binary (the baseline)")
	b := flag.String("b", "", "the second binary")
	rounds := flag.Int("rounds", 40, "runs of each binary")
	cold := flag.Bool("cold", false, "remove the home's cache directory before each run")
	flag.Parse()
	if *a == "" || *b == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: oneshot -a BIN -b BIN [-rounds N] [-cold] -- COMMAND...")
		os.Exit(2)
	}
	home, err := os.MkdirTemp("", "oneshot-home-")
	if err != nil {
		fail(err)
	}
	defer func() { _ = os.RemoveAll(home) }()
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"))
	once := func(bin string) time.Duration {
		if *cold {
			_ = os.RemoveAll(filepath.Join(home, ".cache"))
		}
		cmd := exec.Command(bin, flag.Args()...)
		cmd.Env, cmd.Dir = env, home
		began := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			fail(fmt.Errorf("%s %v: %w\n%s", bin, flag.Args(), err, out))
		}
		return time.Since(began)
	}
	var ta, tb []time.Duration
	var ratios []float64
	for range *rounds {
		x, y := once(*a), once(*b)
		ta, tb = append(ta, x), append(tb, y)
		ratios = append(ratios, float64(y)/float64(x))
	}
	fmt.Printf("%s: median %v, mean %v\n", *a, median(ta), mean(ta))
	fmt.Printf("%s: median %v, mean %v\n", *b, median(tb), mean(tb))
	slices.Sort(ratios)
	fmt.Printf("paired ratio B/A: median %.3f over %d rounds\n", ratios[len(ratios)/2], *rounds)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2].Round(100 * time.Microsecond)
}

func mean(d []time.Duration) time.Duration {
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return (sum / time.Duration(len(d))).Round(100 * time.Microsecond)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "oneshot:", err)
	os.Exit(1)
}
