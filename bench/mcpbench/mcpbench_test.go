package mcpbench_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/bench/mcpbench"
	"github.com/cordisgo/harness/internal/demoserver"
)

// serveEnv makes the test binary serve the demo server on stdio instead of running tests,
// so that the tests need no harness binary.
const serveEnv = "MCPBENCH_SERVE_DEMO"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		if err := demoserver.ServeStdio(context.Background(), demoserver.Options{}); err != nil {
			fmt.Fprintln(os.Stderr, "demo server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// server is the stdio server of the tests and benchmarks: the harness binary named by
// MCPBENCH_HARNESS (`demo-server`), or else this test binary serving the same demo server.
func server(tb testing.TB) mcpbench.Server {
	tb.Helper()
	if p := os.Getenv("MCPBENCH_HARNESS"); p != "" {
		return mcpbench.HarnessServer(p)
	}
	exe, err := os.Executable()
	if err != nil {
		tb.Skipf("no path to the test binary: %v", err)
	}
	return mcpbench.Server{Command: exe, Env: map[string]string{serveEnv: "1"}}
}

func dial(tb testing.TB, name string) mcpbench.Client {
	tb.Helper()
	cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mcpbench.Dial(cx, name, server(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Errorf("close %s: %v", name, err)
		}
	})
	return c
}

func TestPercentile(t *testing.T) {
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0.1, time.Millisecond}} {
		if got := mcpbench.Percentile(lat, tc.p); got != tc.want {
			t.Errorf("p%v = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := mcpbench.Percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one = %v", got)
	}
}

func TestSummarize(t *testing.T) {
	lat := []time.Duration{4 * time.Microsecond, time.Microsecond, 3 * time.Microsecond, 2 * time.Microsecond}
	st := mcpbench.Summarize(lat, time.Millisecond)
	if st.Calls != 4 || st.CallsPerSec != 4000 || st.P50Us != 2 || st.P99Us != 4 || st.MaxUs != 4 || st.MeanUs != 2.5 {
		t.Errorf("Summarize = %+v", st)
	}
}

func TestDriveMakesEveryCall(t *testing.T) {
	var n atomic.Int64
	st, err := mcpbench.Drive(context.Background(), mcpbench.Load{Calls: 1000, Concurrency: 8, Warmup: 50},
		func(context.Context) error { n.Add(1); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if n.Load() != 1050 || st.Calls != 1000 || st.Concurrency != 8 || st.Truncated {
		t.Errorf("made %d calls, stats %+v", n.Load(), st)
	}
}

func TestDriveStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	var n atomic.Int64
	_, err := mcpbench.Drive(context.Background(), mcpbench.Load{Calls: 100000, Concurrency: 4},
		func(context.Context) error {
			if n.Add(1) == 10 {
				return boom
			}
			return nil
		})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if n.Load() > 1000 {
		t.Errorf("%d calls made after the failure", n.Load())
	}
}

func TestDriveStopsAtMaxDuration(t *testing.T) {
	st, err := mcpbench.Drive(context.Background(), mcpbench.Load{Calls: 1 << 20, Concurrency: 2, MaxDuration: 20 * time.Millisecond},
		func(context.Context) error { time.Sleep(100 * time.Microsecond); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !st.Truncated || st.Calls == 0 || st.Calls >= 1<<20 || st.P50Us < 100 {
		t.Errorf("stats %+v", st)
	}
}

func TestReadMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	m, err := mcpbench.ReadMemory(0)
	if err != nil {
		t.Fatal(err)
	}
	if m.HWMKiB <= 0 || m.RSSKiB <= 0 || m.RSSKiB > m.HWMKiB {
		t.Errorf("memory %+v", m)
	}
	// The parts of VmRSS (RssShmem aside): the process's own memory and mapped files.
	if m.AnonKiB <= 0 || m.FileKiB <= 0 || m.AnonKiB+m.FileKiB > m.RSSKiB {
		t.Errorf("RssAnon %d + RssFile %d KiB, VmRSS %d KiB", m.AnonKiB, m.FileKiB, m.RSSKiB)
	}
}

// TestClients makes a few calls with each Go client against the demo server over stdio.
func TestClients(t *testing.T) {
	for _, name := range []string{mcpbench.ClientHarness, mcpbench.ClientGoSDK} {
		t.Run(name, func(t *testing.T) {
			c := dial(t, name)
			if got := c.Protocol(); got != mcpbench.Protocol {
				t.Errorf("protocol %q, want %q", got, mcpbench.Protocol)
			}
			st, err := mcpbench.Drive(context.Background(), mcpbench.Load{Calls: 20, Concurrency: 4}, c.Call)
			if err != nil {
				t.Fatal(err)
			}
			if st.Calls != 20 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestStartup mounts two servers each way and checks that both are reported.
func TestStartup(t *testing.T) {
	srv := server(t)
	for _, parallel := range []bool{true, false} {
		cx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		run, err := mcpbench.Startup(cx, mcpbench.Logger(), 2, parallel, srv)
		cancel()
		if err != nil {
			t.Fatalf("parallel %v: %v", parallel, err)
		}
		if run.Wall <= 0 {
			t.Errorf("parallel %v: wall %v", parallel, run.Wall)
		}
	}
}

var benchClients = []string{mcpbench.ClientHarness, mcpbench.ClientGoSDK}

// BenchmarkCallStdio is one echo call at a time over stdio: the bare go-sdk session and
// the harness path (Registry.Execute through mcpclient), against the same server. With
// -benchmem, B/op and allocs/op are the client process's.
func BenchmarkCallStdio(b *testing.B) {
	for _, name := range benchClients {
		b.Run(name, func(b *testing.B) {
			c := dial(b, name)
			cx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Call(cx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCallStdioC16 is BenchmarkCallStdio with 16 calls in flight.
func BenchmarkCallStdioC16(b *testing.B) {
	procs := runtime.GOMAXPROCS(0)
	for _, name := range benchClients {
		b.Run(name, func(b *testing.B) {
			c := dial(b, name)
			b.SetParallelism((16 + procs - 1) / procs)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				cx := context.Background()
				for pb.Next() {
					if err := c.Call(cx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
