//go:build unix

package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cordisgo/harness/plugins/mcpclient/transport"
	"github.com/cordisgo/harness/workspace/sandbox"
)

var lookPath = exec.LookPath

type shellInput struct {
	Command    string `json:"command" jsonschema:"the command, run as bash -c COMMAND in the workspace root"`
	Timeout    int    `json:"timeout,omitempty" jsonschema:"seconds before the command is stopped (default 120, at most 600); ignored in the background"`
	Background bool   `json:"background,omitempty" jsonschema:"start the command as a job and return at once: for servers, watchers and long builds"`
	DryRun     bool   `json:"dryRun,omitempty" jsonschema:"only say what would run, and how"`
}

type outputInput struct {
	Job    int  `json:"job,omitempty" jsonschema:"the job (leave out to list the jobs)"`
	Offset *int `json:"offset,omitempty" jsonschema:"the byte of the output to start at (0 for its beginning); leave out for its end (the tail)"`
	Tail   int  `json:"tail,omitempty" jsonschema:"with no offset: how many of the last lines to return (default 100)"`
}

type killInput struct {
	Job int `json:"job" jsonschema:"the job to stop"`
}

// job is a command the shell started: a process group, its output file, its end.
type job struct {
	id         int
	command    string
	background bool
	started    time.Time
	path       string // the output file
	group      transport.Group
	written    atomic.Int64 // output bytes kept
	dropped    atomic.Int64 // output bytes beyond maxJobOutput
	done       chan struct{}
	// Set before done is closed:
	exit  int
	ended time.Time

	mu      sync.Mutex
	stopped string // why the workspace stopped it ("timed out after 120 s", "killed", …)
}

func (j *job) finished() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// status words where the job stands.
func (j *job) status() string {
	if !j.finished() {
		return fmt.Sprintf("running for %s", time.Since(j.started).Round(100*time.Millisecond))
	}
	took := j.ended.Sub(j.started).Round(10 * time.Millisecond)
	j.mu.Lock()
	stopped := j.stopped
	j.mu.Unlock()
	if stopped != "" {
		return fmt.Sprintf("%s (exit status %d, after %s)", stopped, j.exit, took)
	}
	return fmt.Sprintf("exit status %d (%s)", j.exit, took)
}

// addShellTools registers shell, shell_output and shell_kill.
func (s *Server) addShellTools() {
	sh := s.shell
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  "shell",
		Title: "Run a shell command",
		Description: fmt.Sprintf("Runs a bash command in the workspace root and returns its exit status and output (stdout and stderr "+
			"together). The command is stopped, with everything it started, after its timeout (default %d s). Output beyond %d KiB "+
			"is shown head and tail only; the whole of it is kept for shell_output. With background, the command runs as a job: "+
			"shell_output shows its output, shell_kill stops it. Commands get a private TMPDIR, no stdin, and none of the "+
			"environment's credentials. %s.",
			int(defaultShellTimeout/time.Second), shellShown>>10, sh.describe()),
		Annotations: commands,
		Meta:        dryRunnable,
	}, sh.run)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "shell_output",
		Title:       "Show a job's output",
		Description: "Shows a shell job's status and output: the last lines (tail), or the output from a byte offset to page through all of it. Without a job, lists the jobs.",
		Annotations: readOnly,
	}, sh.output)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:        "shell_kill",
		Title:       "Stop a job",
		Description: "Stops a shell job and everything it started (SIGTERM, then SIGKILL), and shows the end of its output.",
		Annotations: kills,
	}, sh.kill)
}

// describe is the sandbox as the shell tool's description says it.
func (sh *shell) describe() string {
	e := sh.enforcement
	switch {
	case e.Mode == ModeFullAccess:
		return "Sandbox: none (danger-full-access): commands can read and change everything you can"
	case e.Level == sandbox.LevelNone:
		return "WARNING: NOT SANDBOXED: " + e.Why + "; " + e.Summary()
	}
	where := "the workspace root, TMPDIR and the sandbox's cache"
	if e.Mode == ModeReadOnly {
		where = "TMPDIR and the sandbox's cache only (the workspace is read-only)"
	}
	return fmt.Sprintf("Sandbox (Linux Landlock): commands may write in %s; credentials (~/.ssh, cloud and harness files) and other processes' /proc are unreadable; %s", where, e.Summary())
}

// run is the shell tool.
func (sh *shell) run(cx context.Context, _ *mcp.CallToolRequest, in shellInput) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(in.Command) == "" {
		return nil, nil, errors.New("command is empty")
	}
	timeout := defaultShellTimeout
	if in.Timeout != 0 {
		timeout = time.Duration(in.Timeout) * time.Second
		if in.Timeout < 0 || timeout > maxShellTimeout {
			return nil, nil, fmt.Errorf("timeout %d s: expected 1 to %d", in.Timeout, int(maxShellTimeout/time.Second))
		}
	}
	if in.DryRun {
		how := fmt.Sprintf("timeout %s", timeout)
		if in.Background {
			how = "in the background"
		}
		return preview(fmt.Sprintf("$ %s\n(in %s, %s; %s)", in.Command, sh.s.root.dir, how, sh.enforcement.Summary()), "command"), nil, nil
	}
	if sh.bashErr != nil {
		return nil, nil, fmt.Errorf("no shell to run the command: %w", sh.bashErr)
	}
	j, err := sh.start(in.Command, in.Background)
	if err != nil {
		return nil, nil, err
	}
	if in.Background {
		return text(fmt.Sprintf("started job %d in the background: shell_output {\"job\": %d} shows its output, shell_kill {\"job\": %d} stops it", j.id, j.id, j.id)), nil, nil
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-j.done:
	case <-t.C:
		sh.stop(j, fmt.Sprintf("timed out after %s: stopped with everything it started", timeout))
	case <-cx.Done():
		sh.stop(j, "cancelled: stopped with everything it started")
		<-j.done
		return nil, nil, context.Cause(cx)
	}
	<-j.done
	return text(sh.result(j)), nil, nil
}

// start starts command as a job.
func (sh *shell) start(command string, background bool) (*job, error) {
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		return nil, errors.New("the workspace is closing")
	}
	sh.nextID++
	id := sh.nextID
	sh.forget()
	sh.mu.Unlock()

	j := &job{id: id, command: command, background: background, started: time.Now(), done: make(chan struct{}),
		path: filepath.Join(sh.outDir, fmt.Sprintf("job-%d.out", id))}
	out, err := os.OpenFile(j.path, osCreateExcl, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the job's output file: %w", err)
	}
	cmd, err := sandbox.Command(sh.helper, sh.policy, []string{sh.bash, "-c", command})
	if err != nil {
		_ = out.Close()
		return nil, err
	}
	cmd.Dir = sh.s.root.dir
	cmd.Env = sh.env
	transport.OwnGroup(cmd)
	r, w, err := os.Pipe()
	if err != nil {
		_ = out.Close()
		return nil, err
	}
	// The pipe's write end goes to the command directly: no copying goroutine of os/exec's
	// waits on a grandchild that keeps it open.
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		_ = out.Close()
		return nil, fmt.Errorf("starting the command: %w", err)
	}
	_ = w.Close()
	j.group = transport.Group(cmd.Process.Pid)
	sh.mu.Lock()
	sh.jobs[id] = j
	sh.mu.Unlock()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		j.copyOutput(r, out)
	}()
	go func() {
		err := cmd.Wait()
		j.exit = exitStatus(cmd, err)
		// Whatever the command left running in its group goes with it (a background job's
		// own children end with the job too).
		if err := j.group.End(killGrace); err != nil {
			sh.s.log.Error("workspace: a command's process group survived SIGKILL", "job", j.id, "err", err)
		}
		select {
		case <-copied:
		case <-time.After(time.Second):
			// Something outside the group holds the pipe (it called setsid): stop reading.
			_ = r.Close()
			<-copied
		}
		_ = r.Close()
		_ = out.Close()
		j.ended = time.Now()
		close(j.done)
	}()
	return j, nil
}

// exitStatus is the command's exit status as the helper reports it (128+N for signal N).
func exitStatus(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return -1
	}
	if code := cmd.ProcessState.ExitCode(); code >= 0 {
		return code
	}
	return 128 + 9 // the helper itself was killed
}

// copyOutput copies the command's output into its file, up to maxJobOutput; the rest is
// read and counted, so the command is never blocked on a full pipe.
func (j *job) copyOutput(r io.Reader, out *os.File) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			keep := min(int64(n), max(0, maxJobOutput-j.written.Load()))
			if keep > 0 {
				if _, werr := out.Write(buf[:keep]); werr == nil {
					j.written.Add(keep)
				}
			}
			j.dropped.Add(int64(n) - keep)
		}
		if err != nil {
			return
		}
	}
}

// stop ends a job's group, saying why, and does not wait for the job's end.
func (sh *shell) stop(j *job, why string) {
	if j.finished() {
		return
	}
	j.mu.Lock()
	if j.stopped == "" {
		j.stopped = why
	}
	j.mu.Unlock()
	go func() {
		if err := j.group.End(killGrace); err != nil {
			sh.s.log.Error("workspace: a command's process group survived SIGKILL", "job", j.id, "err", err)
		}
	}()
}

// stopAll stops every running job and waits for them to end; no job starts afterwards.
func (sh *shell) stopAll() {
	sh.mu.Lock()
	sh.closed = true
	var running []*job
	for _, j := range sh.jobs {
		if !j.finished() {
			running = append(running, j)
		}
	}
	sh.mu.Unlock()
	var wg sync.WaitGroup
	for _, j := range running {
		wg.Go(func() {
			sh.stop(j, "stopped: the workspace closed")
			<-j.done
		})
	}
	wg.Wait()
}

// forget drops the oldest finished jobs beyond maxJobs (with sh.mu held).
func (sh *shell) forget() {
	if len(sh.jobs) < maxJobs {
		return
	}
	ids := make([]int, 0, len(sh.jobs))
	for id := range sh.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if j := sh.jobs[id]; j.finished() && len(sh.jobs) >= maxJobs {
			_ = os.Remove(j.path)
			delete(sh.jobs, id)
		}
	}
}

// result words a finished foreground job: its status and its output, head and tail when
// long.
func (sh *shell) result(j *job) string {
	var b strings.Builder
	b.WriteString(j.status())
	b.WriteByte('\n')
	size := j.written.Load()
	if size == 0 {
		b.WriteString("(no output)\n")
		return b.String()
	}
	if size <= shellShown {
		b.WriteString(validString(readAt(j.path, 0, int(size))))
	} else {
		head := readAt(j.path, 0, shellHead)
		tail := readAt(j.path, size-(shellShown-shellHead), shellShown-shellHead)
		b.WriteString(validString(head))
		fmt.Fprintf(&b, "\n[… %d bytes not shown: the whole output (%d bytes) is job %d's; shell_output {\"job\": %d, \"offset\": %d} pages through it …]\n",
			size-shellShown, size, j.id, j.id, shellHead)
		b.WriteString(validString(tail))
	}
	if d := j.dropped.Load(); d > 0 {
		fmt.Fprintf(&b, "\n[%d more bytes of output were not kept: the limit is %d MiB]", d, maxJobOutput>>20)
	}
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

// readAt reads up to n bytes of the file at off.
func readAt(path string, off int64, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	buf := make([]byte, n)
	k, _ := f.ReadAt(buf, max(off, 0))
	return string(buf[:k])
}

// output is shell_output.
func (sh *shell) output(_ context.Context, _ *mcp.CallToolRequest, in outputInput) (*mcp.CallToolResult, any, error) {
	if in.Job == 0 {
		return text(sh.list()), nil, nil
	}
	j, err := sh.job(in.Job)
	if err != nil {
		return nil, nil, err
	}
	size := j.written.Load()
	var b strings.Builder
	fmt.Fprintf(&b, "job %d: %s: %s\n", j.id, j.status(), oneLine(j.command))
	off := int64(-1)
	if in.Offset != nil {
		off = int64(*in.Offset)
	}
	switch {
	case in.Offset != nil && off < 0 || in.Tail < 0:
		return nil, nil, errors.New("offset and tail must not be negative")
	case off >= 0 || in.Tail == 0 && size <= maxPage:
		off = max(off, 0)
		if off > size {
			fmt.Fprintf(&b, "(the output has %d bytes; offset %d is past its end)\n", size, off)
			break
		}
		n := int(min(int64(maxPage), size-off))
		fmt.Fprintf(&b, "bytes %d-%d of %d:\n", off, off+int64(n), size)
		b.WriteString(validString(readAt(j.path, off, n)))
		if next := off + int64(n); next < size {
			fmt.Fprintf(&b, "\n[continue with offset %d]\n", next)
		}
	default:
		lines := in.Tail
		if lines == 0 {
			lines = 100
		}
		from := max(0, size-maxPage)
		chunk := readAt(j.path, from, int(size-from))
		parts := strings.SplitAfter(chunk, "\n")
		if len(parts) > 0 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		if len(parts) > lines {
			parts = parts[len(parts)-lines:]
		}
		fmt.Fprintf(&b, "the last %d lines (of %d bytes):\n", len(parts), size)
		b.WriteString(validString(strings.Join(parts, "")))
	}
	return text(b.String()), nil, nil
}

// kill is shell_kill.
func (sh *shell) kill(_ context.Context, _ *mcp.CallToolRequest, in killInput) (*mcp.CallToolResult, any, error) {
	j, err := sh.job(in.Job)
	if err != nil {
		return nil, nil, err
	}
	if j.finished() {
		return text(fmt.Sprintf("job %d had already ended: %s", j.id, j.status())), nil, nil
	}
	sh.stop(j, "killed")
	<-j.done
	res, _, err := sh.output(context.Background(), nil, outputInput{Job: j.id, Tail: 20})
	return res, nil, err
}

// job returns the job called id.
func (sh *shell) job(id int) (*job, error) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	j, ok := sh.jobs[id]
	if !ok {
		return nil, fmt.Errorf("no job %d (shell_output without a job lists them)", id)
	}
	return j, nil
}

// list words the jobs, newest first.
func (sh *shell) list() string {
	sh.mu.Lock()
	jobs := make([]*job, 0, len(sh.jobs))
	for _, j := range sh.jobs {
		jobs = append(jobs, j)
	}
	sh.mu.Unlock()
	if len(jobs) == 0 {
		return "no jobs"
	}
	slices.SortFunc(jobs, func(a, b *job) int { return b.id - a.id })
	var b strings.Builder
	for _, j := range jobs {
		kind := ""
		if j.background {
			kind = " (background)"
		}
		fmt.Fprintf(&b, "job %d%s: %s, %d bytes of output: %s\n", j.id, kind, j.status(), j.written.Load(), oneLine(j.command))
	}
	return b.String()
}

// oneLine shortens a command to one line of at most 120 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
