//go:build linux

package agentworkspace

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cordisgo/harness/workspace/sandbox"
)

// TestNetworkOption: the workspace's shell reaches the network only when the profile's row
// says --network. A command that connects to a TCP listener of the test is refused by the
// sandbox in the workspace the built-in profile's agent brings (Landlock ABI 4 and later
// enforce it; on an older kernel the attempt is reported, as the escape suite does), and
// gets through in one whose row has --network.
func TestNetworkOption(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	got := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 16)
			n, _ := c.Read(b)
			_ = c.Close()
			got <- string(b[:n])
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	connect := fmt.Sprintf(`{"command":"echo hello > /dev/tcp/127.0.0.1/%d && echo connected"}`, port)
	dir := t.TempDir()

	off := runHarness(t, dir, "-p", "cli", "tools", "call", "--local", "mcp__workspace__shell", connect)
	switch abi := sandbox.Probe(); {
	case abi < 4 && strings.Contains(off, "connected"):
		t.Logf("Landlock ABI %d does not restrict TCP: the command connected without --network (reported by the escape suite too):\n%s", abi, off)
	case strings.Contains(off, "connected") || strings.Contains(off, "exit status 0"):
		t.Errorf("without --network the command connected:\n%s", off)
	case !strings.Contains(off, "Permission denied"):
		t.Errorf("without --network: not the sandbox's refusal:\n%s", off)
	}

	profile := filepath.Join(dir, "network.yaml")
	if err := os.WriteFile(profile, []byte("extends: cli\nplugins:\n  workspace:\n    use: mcpclient\n    config:\n      serverName: workspace\n"+
		"      transport: stdio\n      command: ${HARNESS_SELF}\n      args: [workspace-server, --network]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	on := runHarness(t, dir, "-p", profile, "tools", "call", "--local", "mcp__workspace__shell", connect)
	if !strings.Contains(on, "connected") || !strings.Contains(on, "exit status 0") {
		t.Fatalf("with --network the command did not connect:\n%s", on)
	}
	select {
	case s := <-got:
		if s != "hello\n" {
			t.Errorf("the listener read %q", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the listener got no connection although the command said it connected")
	}
}
