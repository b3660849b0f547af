package transport

import "github.com/cordisgo/harness/internal/procfs"

// onlyZombiesInGroup reports whether every process in group pgid is a zombie, by reading
// the process table. It reports false when /proc is unreadable, so an unverifiable group is
// never called gone.
func onlyZombiesInGroup(pgid int) bool {
	all, err := procfs.List()
	if err != nil {
		return false
	}
	for _, p := range all {
		if p.PGID == pgid && !p.Gone() {
			return false
		}
	}
	return true
}
