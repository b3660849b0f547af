package remote

import (
	"errors"
	"fmt"
	"os"

	"github.com/cordisgo/harness/internal/loopback"
)

// ErrStaleEndpoint is matched (errors.Is) by the error [ReadEndpoint] and [Discover]
// return for an endpoint file whose host is gone: its process is not running. Such a file
// is left behind by a host that was killed; the next host that publishes one replaces it.
// The error also matches [os.ErrNotExist], as there is no running host.
var ErrStaleEndpoint = errors.New("stale endpoint file: its host is not running")

// staleError is an endpoint file whose process is gone.
type staleError struct {
	file string
	pid  int
}

func (e *staleError) Error() string {
	return fmt.Sprintf("remote endpoint %s: stale: the host (pid %d) is not running", e.file, e.pid)
}

func (e *staleError) Is(target error) bool {
	return target == ErrStaleEndpoint || target == os.ErrNotExist
}

// EndpointInUseError is the load error of a remote plugin whose endpoint file (or token
// file) is already published by another host that is running: one host per file, so that
// starting a second one never takes the first one's clients away. Give the second host its
// own files (tokenFile, endpointFile), or stop the first. It is immutable.
type EndpointInUseError struct {
	// File is the endpoint file.
	File string
	// PID is the running host's process id; URL its API.
	PID int
	URL string
}

func (e *EndpointInUseError) Error() string {
	return fmt.Sprintf("remote API: the endpoint file %s belongs to the host running as pid %d at %s; "+
		"stop that host, or give this one its own files (the remote plugin's tokenFile, e.g. --set plugins.remote.config.tokenFile=PATH)",
		e.File, e.PID, e.URL)
}

// InUse returns an [*EndpointInUseError] when the endpoint file that a remote plugin
// configured with cfg would publish belongs to a host that is running, and nil otherwise
// (no file, a stale one, or a configuration the plugin will refuse itself when it loads).
// A command that hosts a profile asks it before mounting anything, so that a second host
// on the same files refuses before it starts a single server.
func InUse(cfg Config) error {
	_, endpointFile, err := cfg.files()
	if err != nil {
		return nil
	}
	if ep, live := loopback.Held(endpointFile); live {
		return &EndpointInUseError{File: endpointFile, PID: ep.PID, URL: ep.URL}
	}
	return nil
}
