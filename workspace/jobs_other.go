//go:build !unix

package workspace

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lookPath finds no shell: the shell tools need Unix process groups.
func lookPath(string) (string, error) {
	return "", errors.New("the workspace's shell needs a Unix system")
}

// addShellTools registers nothing here.
func (s *Server) addShellTools() { _ = mcp.Tool{} }

// stopAll has no jobs to stop.
func (sh *shell) stopAll() {}

// job is never made here.
type job struct{}
