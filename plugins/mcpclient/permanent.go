package mcpclient

import (
	"errors"
	"io/fs"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
)

// permanent reports whether a failed connection attempt can never succeed with the same
// configuration, so that retrying it only delays the report: the executable does not exist
// or may not be run (not found, permission denied, not an executable format), the working
// directory does not exist, or the URL cannot be dialled at all (a scheme other than http or
// https, a malformed host or port). Everything else — refused connections, timeouts, a
// server that exits or answers badly, DNS failures — is transient and keeps the backoff.
func permanent(err error) bool {
	if err == nil || errors.Is(err, ErrCleanupIncomplete) {
		return false
	}
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, syscall.ENOEXEC) {
		return true
	}
	// fork/exec and chdir report a missing or forbidden path as *fs.PathError.
	if pe, ok := errors.AsType[*fs.PathError](err); ok &&
		(errors.Is(pe, fs.ErrNotExist) || errors.Is(pe, fs.ErrPermission)) {
		return true
	}
	if _, ok := errors.AsType[*net.AddrError](err); ok {
		return true // "invalid port", "missing port in address"
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		if _, ok := errors.AsType[url.EscapeError](ue); ok {
			return true
		}
		if _, ok := errors.AsType[url.InvalidHostError](ue); ok {
			return true
		}
		if strings.Contains(ue.Err.Error(), "unsupported protocol scheme") {
			return true
		}
	}
	return false
}
