//go:build linux && !race

package ptc_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cordisgo/harness/internal/procfs"
	"github.com/cordisgo/harness/plugins/ptc"
)

// memoryChildEnv tells the test binary, run again as a child, to run probes under an
// address-space limit: "<memory limit>,<headroom>,<probe names joined by |, or * for all,
// or control>".
const memoryChildEnv = "PTC_MEMORY_CHILD"

// issueProbes run again with the default memory limit: the two programs of issue 33 and the
// concatenations, whose overshoot grows with the limit.
var issueProbes = []string{"join separator", "replace with a long replacement", "concatenation", "template literal"}

// The probes run in child processes whose address space is limited (RLIMIT_AS) to what they
// have mapped when they start plus a headroom: all of them with probeLimit and 384 MiB, and
// the issue's with the default limit (256 MiB) and 1536 MiB. Every probe ends with its clear
// error, the child goes on to the next and says at the end that it is alive. The control
// shows the limit is real: the same child allocating twice its headroom at once dies with
// Go's "fatal error: out of memory", as the whole process did before the guards for
// new Array(1e4).join("x".repeat(1e5)). Not under the race detector, which maps shadow
// memory for every heap page and runs the probes ten times slower (TestMemoryProbes runs
// them there in process); .ci/run runs this test without it.
func TestMemoryProbesUnderAddressSpaceLimit(t *testing.T) {
	var def ptc.Limits
	def.Default()
	child := func(limit, headroom int64, probes string) (string, error) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), memoryChildEnv+"="+strconv.FormatInt(limit, 10)+","+strconv.FormatInt(headroom, 10)+","+probes)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, c := range []struct {
		limit, headroom int64
		probes          []string
	}{
		{probeLimit, 384 << 20, nil},
		{def.MaxMemoryBytes, 1536 << 20, issueProbes},
	} {
		names := "*"
		if c.probes != nil {
			names = strings.Join(c.probes, "|")
		}
		out, err := child(c.limit, c.headroom, names)
		if err != nil || !strings.Contains(out, "host alive: ok") {
			t.Fatalf("the child did not survive the probes (%v):\n%s%s", err, fatalHead(out), tail(out, 4000))
		}
		var reported int
		for _, line := range strings.Split(out, "\n") {
			if rest, ok := strings.CutPrefix(line, "probe "); ok {
				reported++
				if name, verdict, _ := strings.Cut(rest, ": "); !strings.HasPrefix(verdict, "ok ") {
					t.Errorf("probe %s: %s", name, verdict)
				}
			}
		}
		if want := len(memoryProbes); c.probes != nil && reported != len(c.probes) || c.probes == nil && reported != want {
			t.Fatalf("the child reported %d probes:\n%s", reported, tail(out, 4000))
		}
		t.Logf("memory limit %d MiB, address space +%d MiB:\n%s", c.limit>>20, c.headroom>>20, out)
	}

	out, err := child(probeLimit, 384<<20, "control")
	if err == nil || !strings.Contains(out, "fatal error:") {
		t.Fatalf("the control allocation did not hit the address-space limit (%v):\n%s", err, tail(out, 2000))
	}
	t.Logf("control: %s", strings.Join(strings.SplitN(out, "\n", 4)[:3], " | "))
}

// memoryChild is the test binary run again by TestMemoryProbesUnderAddressSpaceLimit
// (TestMain calls it when memoryChildEnv is set): it limits its own address space, runs the
// probes (or the control) and reports each on a line of its own.
func memoryChild(spec string) int {
	parts := strings.SplitN(spec, ",", 3)
	if len(parts) != 3 {
		fmt.Println("bad", memoryChildEnv, spec)
		return 1
	}
	limit, _ := strconv.ParseInt(parts[0], 10, 64)
	headroom, _ := strconv.ParseInt(parts[1], 10, 64)
	e, dispose, err := childEnv(limit)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer dispose()
	mapped, err := procfs.StatusKB(os.Getpid(), "VmSize")
	if err != nil {
		fmt.Println(err)
		return 1
	}
	as := uint64(mapped<<10 + headroom)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: as, Max: as}); err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("address space limited to %d MiB (%d mapped + %d)\n", as>>20, mapped>>10, headroom>>20)
	if parts[2] == "control" {
		b := make([]byte, 2*headroom)
		for i := range b {
			b[i] = 1
		}
		runtime.KeepAlive(b)
		fmt.Println("the control allocation succeeded")
		return 0
	}
	names := strings.Split(parts[2], "|")
	for _, p := range memoryProbes {
		if parts[2] != "*" && !slices.Contains(names, p.name) {
			continue
		}
		out := e.run(p.code)
		verdict := "ok "
		if err := checkProbe(p, out); err != nil {
			verdict = "FAILED "
		}
		msg := "success"
		if out.Err != nil {
			msg = out.Err.Error()
		}
		if len(msg) > 160 {
			msg = strings.ToValidUTF8(msg[:160], "") + "…"
		}
		fmt.Printf("probe %s: %s%s (heap growth %d MiB)\n", p.name, verdict, msg, out.HeapGrowth>>20)
	}
	out := e.run(`return (await tools.echo({})).content[0].text`)
	if out.Err != nil {
		fmt.Println(out.Err)
		return 1
	}
	hwm, _ := procfs.StatusKB(os.Getpid(), "VmHWM")
	fmt.Printf("host alive: %s (peak resident %d MiB)\n", strings.Trim(string(out.Value), `"`), hwm>>10)
	return 0
}

// fatalHead returns the start of a Go runtime crash in s (its "fatal error:" line and the
// failing goroutine's trace), which a tail of a long crash dump leaves out; "" when s has none.
func fatalHead(s string) string {
	i := strings.Index(s, "fatal error:")
	if i < 0 {
		return ""
	}
	return s[i:min(len(s), i+1500)] + "\n…\n"
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
