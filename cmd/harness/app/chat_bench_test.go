//go:build linux

package app

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/internal/modeltest"
	"github.com/cordisgo/harness/internal/procfs"
)

// chatProcess starts harness chat in its own process on the default profile (the demo
// server), its model the local server srv, every demo tool allowed, stdin and stdout pipes.
func chatProcess(b *testing.B, srv *modeltest.Server) (stdin io.WriteCloser, stdout *bufio.Reader, pid int, wait func()) {
	b.Helper()
	state := b.TempDir()
	cmd := harnessCmd(b, "chat", "--allow", "demo/*")
	cmd.Env = append(cmd.Env, "DEEPSEEK_BASE_URL="+srv.URL, "DEEPSEEK_API_KEY="+srv.Key, "XDG_STATE_HOME="+state)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return in, bufio.NewReaderSize(out, 1<<20), cmd.Process.Pid, func() {
		_ = in.Close()
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// readUntil reads r until it has read s, and fails the benchmark at EOF.
func readUntil(b *testing.B, r *bufio.Reader, s string) {
	b.Helper()
	var seen []byte
	for !strings.HasSuffix(string(seen), s) {
		c, err := r.ReadByte()
		if err != nil {
			b.Fatalf("chat's output ended before %q: %v\n%s", s, err, seen)
		}
		seen = append(seen, c)
		if len(seen) > 4*len(s) {
			seen = seen[len(seen)-len(s):]
		}
	}
}

// statusKiB reads a field of /proc/PID/status, in KiB.
func statusKiB(b *testing.B, pid int, field string) int64 {
	b.Helper()
	n, err := procfs.StatusKB(pid, field)
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkChatSession is a 200-turn session of harness chat in its own process: each turn a
// call of the demo server's echo tool with a 1 KB argument, then an answer with reasoning,
// the whole history sent back on every request. It reports the process's peak resident set
// (the target: under 60 MiB) and the time of a turn, the model at zero latency.
//
//	go test -run '^$' -bench ChatSession -benchtime 1x ./cmd/harness/app/
func BenchmarkChatSession(b *testing.B) {
	turns := 200
	if s := os.Getenv("CHAT_TURNS"); s != "" {
		turns, _ = strconv.Atoi(s)
	}
	payload := strings.Repeat("the quick brown fox jumps over the lazy dog; ", 23)
	srv := modeltest.NewServer(modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
		if c.Messages[len(c.Messages)-1].Role == "user" {
			return modeltest.Reply{Reasoning: "Echo it back first.", ToolCalls: []modeltest.ToolCall{
				{Name: "mcp__demo__echo", Arguments: fmt.Sprintf(`{"text":%q}`, payload)}}}
		}
		return modeltest.Reply{Reasoning: "The echo came back whole; say so.",
			Content: "The server echoed the text back unchanged, " + fmt.Sprint(len(payload)) + " bytes."}
	}})
	defer srv.Close()
	var peak, anon, file int64
	var elapsed time.Duration
	for b.Loop() {
		in, out, pid, wait := chatProcess(b, srv)
		readUntil(b, out, "> ")
		t0 := time.Now()
		for i := range turns {
			if _, err := fmt.Fprintf(in, "turn %d: echo the text\n", i); err != nil {
				b.Fatal(err)
			}
			readUntil(b, out, "bytes.")
			readUntil(b, out, "> ")
		}
		elapsed += time.Since(t0)
		// The process's own high-water mark (VmHWM), not wait4's Maxrss: a child started with
		// vfork records its parent's resident set at exec as its own maxrss, so Maxrss would
		// report this benchmark's memory, not harness chat's.
		anon, file = statusKiB(b, pid, "RssAnon"), statusKiB(b, pid, "RssFile")
		peak = max(peak, statusKiB(b, pid, "VmHWM"))
		wait()
	}
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
	b.ReportMetric(float64(anon)/1024, "end-anon-MiB")
	b.ReportMetric(float64(file)/1024, "end-file-MiB")
	b.ReportMetric(float64(elapsed.Microseconds())/float64(b.N*turns), "µs/turn")
}

// BenchmarkChatFirstToken measures how long the first token of an answer takes from the
// model server's release of it to harness chat's standard output: the server holds each
// answer's first token until the benchmark releases it, and the benchmark reads the chat's
// output until the token appears. It is an upper bound of "arrival to terminal" (it includes
// the local server's write and the pipe), reported as the mean and the worst turn.
//
//	go test -run '^$' -bench ChatFirstToken -benchtime 200x ./cmd/harness/app/
func BenchmarkChatFirstToken(b *testing.B) {
	holds := make(chan chan struct{})
	var n int
	srv := modeltest.NewServer(modeltest.Options{Reply: func(c *modeltest.Call) modeltest.Reply {
		h := make(chan struct{})
		holds <- h
		return modeltest.Reply{Content: fmt.Sprintf("token-%d and the rest of the answer.", c.Index), Hold: h}
	}})
	defer srv.Close()
	in, out, _, wait := chatProcess(b, srv)
	readUntil(b, out, "> ")
	var took []time.Duration
	for b.Loop() {
		if _, err := fmt.Fprintf(in, "message %d\n", n); err != nil {
			b.Fatal(err)
		}
		h := <-holds
		t0 := time.Now()
		close(h)
		readUntil(b, out, fmt.Sprintf("token-%d", n))
		took = append(took, time.Since(t0))
		readUntil(b, out, "> ")
		n++
	}
	wait()
	slices.Sort(took)
	var sum time.Duration
	for _, d := range took {
		sum += d
	}
	b.ReportMetric(float64(sum.Microseconds())/float64(len(took)), "mean-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(took[len(took)-1].Microseconds()), "max-µs")
}
