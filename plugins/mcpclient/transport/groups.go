package transport

import "sync"

// liveGroups are the stdio servers of this process whose process group may still run:
// added once the server started, removed once its group is confirmed gone.
var liveGroups = struct {
	mu sync.Mutex
	m  map[*Process]struct{}
}{m: map[*Process]struct{}{}}

func trackGroup(p *Process) {
	liveGroups.mu.Lock()
	liveGroups.m[p] = struct{}{}
	liveGroups.mu.Unlock()
}

func untrackGroup(p *Process) {
	liveGroups.mu.Lock()
	delete(liveGroups.m, p)
	liveGroups.mu.Unlock()
}

// KillProcessGroups kills (SIGKILL) the process group of every stdio server this process
// started that may still run — the server and everything it spawned that stayed in its
// group — waits (a couple of seconds at most) until they are gone, and returns how
// many groups it signalled. It does not touch the clients' state: it is a host's last resort before it exits at once (the harness
// calls it on a second interrupt, while a clean shutdown still waits on its servers), so
// that no server outlives the host. Without process groups (Windows) only each server's
// own process is killed. It is safe for concurrent use.
func KillProcessGroups() int {
	liveGroups.mu.Lock()
	defer liveGroups.mu.Unlock()
	for p := range liveGroups.m {
		killGroup(p)
	}
	for p := range liveGroups.m {
		p.waitGone(killWait) // SIGKILL is delivered asynchronously: see the groups end
	}
	return len(liveGroups.m)
}
