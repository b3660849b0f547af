package sandbox

import (
	"fmt"
	"strings"
	"testing"
)

func TestAssess(t *testing.T) {
	on := Policy{Landlock: true, Network: true}
	off := Policy{Landlock: true}
	for _, c := range []struct {
		p       Policy
		abi     int
		level   Level
		missing string
	}{
		{Policy{}, 11, LevelNone, ""},
		{off, 0, LevelNone, ""},
		{on, 11, LevelFull, ""},
		{off, 11, LevelFull, ""},
		{on, 9, LevelFull, ""},
		{off, 9, LevelPartial, "UDP (ABI 10)"},
		{off, 7, LevelPartial, "connections to Unix sockets by path (ABI 9), UDP (ABI 10)"},
		{on, 3, LevelPartial, "device ioctls (ABI 5), signals and abstract sockets outside the sandbox (ABI 6), connections to Unix sockets by path (ABI 9)"},
		{off, 1, LevelPartial, "truncation (ABI 3)"},
	} {
		r := Assess(c.p, c.abi)
		if r.Level != c.level || !strings.Contains(strings.Join(r.Missing, ", "), c.missing) {
			t.Errorf("Assess(%+v, %d) = %s", c.p, c.abi, r)
		}
		if r.Level == LevelNone && r.Why == "" {
			t.Errorf("Assess(%+v, %d): no reason for none", c.p, c.abi)
		}
	}
}

func TestCommand(t *testing.T) {
	cmd, err := Command([]string{"/bin/helper", "-x"}, Policy{Landlock: true, Writable: []string{"/w"}}, []string{"/bin/bash", "-c", "true"})
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(cmd.Args, " ")
	if !strings.HasPrefix(args, "/bin/helper -x "+HelperArg+` {"landlock":true,"writable":["/w"],"network":false,"parent":`) ||
		!strings.HasSuffix(args, " -- /bin/bash -c true") {
		t.Errorf("args %q", args)
	}
}

// A kernel's Landlock ABI decides how much of a policy it enforces.
func ExampleAssess() {
	p := Policy{Landlock: true, Writable: []string{"/src/app"}}
	fmt.Println(Assess(p, 11))
	fmt.Println(Assess(p, 7))
	fmt.Println(Assess(p, 0).Level)
	// Output:
	// enforcement full (Landlock ABI 11: file writes outside the writable directories, reads of the denied paths, truncation, device ioctls, signals and abstract sockets outside the sandbox, connections to Unix sockets by path, TCP, UDP)
	// enforcement partial (Landlock ABI 7: file writes outside the writable directories, reads of the denied paths, truncation, device ioctls, signals and abstract sockets outside the sandbox, TCP; not enforced: connections to Unix sockets by path (ABI 9), UDP (ABI 10))
	// none
}
