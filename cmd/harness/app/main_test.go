package app

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cordisgo/harness/ctx"
	"github.com/cordisgo/harness/internal/oauthtest"
	"github.com/cordisgo/harness/workspace/sandbox"
)

// testMainEnv makes the test binary act as the harness binary: TestMain
// then runs Main with the process's arguments instead of the tests. The
// default profile's demo row re-executes the binary (${HARNESS_SELF}) as
// `demo-server`, and testOptions passes this variable to such rows.
const testMainEnv = "HARNESS_TEST_MAIN"

// TestMain makes the tests hermetic: HOME and the XDG directories are a directory of
// their own, HARNESS_* variables are unset, and the project settings file is looked for
// from that directory, so that a .harness/ in the checkout or the user's configuration
// never changes a result.
func TestMain(m *testing.M) {
	sandbox.Main() // a workspace's shell command, run through the test binary
	if os.Getenv(testMainEnv) == "1" {
		// The test binary as a harness started by a test (a demo server, mostly), with
		// the environment the test gave it.
		os.Exit(Main(testOptions()))
	}
	if os.Getenv(oauthtest.BrowserEnv) == "1" {
		// The test binary re-executed as $BROWSER: play the user (login_test.go).
		os.Exit(oauthtest.BrowserMain(os.Args[1:]))
	}
	home, err := os.MkdirTemp("", "harness-app-test-")
	if err != nil {
		panic(err)
	}
	for k, v := range map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_DATA_HOME": filepath.Join(home, ".local", "share"), "XDG_STATE_HOME": filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME": filepath.Join(home, ".cache")} {
		_ = os.Setenv(k, v)
	}
	// HARNESS_* overlays of the developer's shell would change the profiles under test.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "HARNESS_") {
			_ = os.Unsetenv(k)
		}
	}
	// The package's directory (in the checkout) stands for home when the project settings
	// file is looked for; a test that changes directory (t.Chdir) keeps its own.
	pkgDir, _ := os.Getwd()
	testWorkDir = func() (string, error) {
		if wd, err := os.Getwd(); err != nil || wd != pkgDir {
			return wd, err
		}
		return home, nil
	}
	// The tests wait on child processes (demo servers, hosts, terminals) far more than they
	// compute: unless -parallel says otherwise, run more of the parallel ones at a time than
	// go test's default, the number of processors.
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(8, runtime.GOMAXPROCS(0))))
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	_ = os.RemoveAll(home)
	os.Exit(code)
}

// testOptions are the options of the harness under test: the built-in
// catalog plus the test plugins, and SelfEnv so that rows running the test
// binary get a harness.
func testOptions() Options {
	plugins := map[string]ctx.PluginDef{}
	for name, def := range testPlugins {
		plugins[name] = def
	}
	return Options{Plugins: plugins, SelfEnv: map[string]string{testMainEnv: "1"}, workDir: testWorkDir}
}

// testWorkDir is where the harness under test looks for the project settings file from
// (TestMain sets it: the tests' home for the package's directory).
var testWorkDir func() (string, error)

// result is what one Run produced.
type result struct {
	code           int
	stdout, stderr string
}

// run runs one command line in process with testOptions, no stdin and an
// environment of env only (nil: testEnv), bounded by 20 s.
func run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	return runWith(t, context.Background(), testOptions(), "", env, args...)
}

// testHomes holds each test's home directory (testEnv).
var testHomes sync.Map // testing.TB → string

// testEnv is the environment of a test's harness runs that name none: HOME and
// XDG_CONFIG_HOME in a directory of the test's own, the same for every run of the test,
// so that the hosts, endpoint files and settings files of tests running in parallel never
// meet.
func testEnv(t testing.TB) []string {
	t.Helper()
	home, ok := testHomes.Load(t)
	if !ok {
		home, _ = testHomes.LoadOrStore(t, t.TempDir())
		t.Cleanup(func() { testHomes.Delete(t) })
	}
	return []string{"HOME=" + home.(string), "XDG_CONFIG_HOME=" + filepath.Join(home.(string), ".config")}
}

// runWith is run with a context, options and stdin.
func runWith(t *testing.T, cx context.Context, o Options, stdin string, env []string, args ...string) result {
	t.Helper()
	if env == nil {
		env = testEnv(t)
	}
	cx, cancel := context.WithTimeout(cx, 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := o.Run(cx, args, strings.NewReader(stdin), &stdout, &stderr, env)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// startInProcess runs `harness ARGS` in process with env and stdin, its stdout discarded,
// until cx is done, and returns once its stderr shows want: the channel the exit status
// comes on, and the stderr. A command that exits first, or shows nothing in 20 s, fails
// the test.
func startInProcess(t *testing.T, cx context.Context, env []string, stdin, want string, args ...string) (<-chan int, *watchWriter) {
	t.Helper()
	ready := make(chan struct{})
	stderr := &watchWriter{want: []string{want}, seen: func() { close(ready) }}
	done := make(chan int, 1)
	go func() {
		done <- testOptions().Run(cx, args, strings.NewReader(stdin), io.Discard, stderr, env)
	}()
	select {
	case <-ready:
	case code := <-done:
		done <- code
		t.Fatalf("%v exited %d before showing %q:\n%s", args, code, want, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("%v did not show %q:\n%s", args, want, stderr.String())
	}
	return done, stderr
}

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeScript writes an executable shell script content to dir/name and returns its path.
func writeScript(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := writeFile(t, dir, name, content)
	if err := os.Chmod(p, 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// expect fails the test unless r has the exit code and its streams contain
// the substrings.
func (r result) expect(t *testing.T, code int, stdout, stderr string) {
	t.Helper()
	if r.code != code || !strings.Contains(r.stdout, stdout) || !strings.Contains(r.stderr, stderr) {
		t.Fatalf("got exit %d, want %d (stdout containing %q, stderr containing %q)\nstdout:\n%s\nstderr:\n%s",
			r.code, code, stdout, stderr, r.stdout, r.stderr)
	}
}
